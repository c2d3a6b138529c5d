#!/usr/bin/env python3
"""Emulates the tensor-core kernels of attn-gpu-mma-matmul on the CPU.

For each case (element type, M, N, K, optional rank-3 input) this script
writes a buffer-level input (extf generics from f16/bf16 + the f32
contraction C[m, n] += A[m, k] * B[n, k]), runs
`attn-opt --attn-gpu-mma-matmul --mlir-print-op-generic` on it, and
*interprets the IR the pass emitted*: the host ops around the gpu.launch and
the launch body for every block, with the 32 lanes of the warp executed in
lockstep (each SSA value holds one value per lane). So every index
computation, load, store, fragment insert/extract and loop bound is the one
the pass generates, not a re-implementation of it.

The warp-wide `nvgpu.mma.sync` / `nvvm.mma.sync` (m16n8k16, row.col) is the
only op modelled from the specification, independently of the pass: the
PTX ISA section "Matrix Fragments for mma.m16n8k16 with floating point
type" gives, for %laneid, groupID = %laneid >> 2 and
threadID_in_group = %laneid % 4, the matrix element each fragment element
a0..a7, b0..b3, c0..c3 / d0..d3 holds. The model scatters the fragments of
all 32 lanes into the 16x16 A, 16x8 B (K x N) and 16x8 C matrices (checking
that every element is supplied exactly once), computes D = A * B + C and
gathers D back into the lanes' fragments. The MLIR vectors map to the PTX
registers as convert-nvgpu-to-nvvm lowers them (row r of the vector<4x2>,
vector<2x2> operands is register r, element 0 in the low half; the f32
vector<2x2> accumulator is c0, c1, c2, c3 in row-major order), which
mma-fragment-layout.test checks on the lowering itself.

The result must equal C0 + A @ B^T (f32 accumulation tolerance); every
element of C must be stored exactly once and every load must be in bounds
and as aligned as its `alignment` attribute claims.

--mutate injects a fragment bug (e.g. the two rows of the B fragment
swapped) to show that the check catches it; the case must then FAIL.

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU: it checks the kernel's
indexing against the documented fragment layout, not the hardware, the
NVVM/PTX lowering below the MLIR level, or ptxas.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

LANES = 32

# ---------------------------------------------------------------------------
# The PTX ISA fragment layout of mma.m16n8k16 (f16/bf16 inputs, f32 acc).


def isa_a_coord(lane, i):
    """Element a_i (i in 0..7) of A (16 x 16, row-major 'row' operand)."""
    group, tig = lane >> 2, lane % 4
    row = group if (i < 2 or 4 <= i < 6) else group + 8
    col = tig * 2 + (i & 0x1) + (8 if i >= 4 else 0)
    return row, col


def isa_b_coord(lane, i):
    """Element b_i (i in 0..3) of B (16 x 8, K x N, 'col' operand)."""
    group, tig = lane >> 2, lane % 4
    row = tig * 2 + (i & 0x1) + (8 if i >= 2 else 0)
    col = group
    return row, col


def isa_c_coord(lane, i):
    """Element c_i / d_i (i in 0..3) of C and D (16 x 8)."""
    group, tig = lane >> 2, lane % 4
    row = group if i < 2 else group + 8
    col = tig * 2 + (i & 0x1)
    return row, col


def scatter(shape, frags, coord):
    """Per-lane fragments [32, n] -> matrix, each element exactly once."""
    mat = np.full(shape, np.nan)
    for lane in range(LANES):
        for i in range(frags.shape[1]):
            r, c = coord(lane, i)
            if not np.isnan(mat[r, c]):
                raise AssertionError(f"ISA model: element ({r},{c}) held twice")
            mat[r, c] = frags[lane, i]
    if np.isnan(mat).any():
        raise AssertionError("ISA model: fragment does not cover the matrix")
    return mat


def isa_mma_m16n8k16(a, b, c):
    """a: [32, 8], b: [32, 4] (float64 values), c: [32, 4] f32 -> d [32, 4]."""
    A = scatter((16, 16), a, isa_a_coord)
    B = scatter((16, 8), b, isa_b_coord)
    C = scatter((16, 8), c, isa_c_coord)
    D = (A @ B + C).astype(np.float32)
    d = np.zeros((LANES, 4), np.float32)
    for lane in range(LANES):
        for i in range(4):
            d[lane, i] = D[isa_c_coord(lane, i)]
    return d


def bf16_bits_to_f64(bits):
    return (np.asarray(bits, np.uint32) << 16).view(np.float32).astype(np.float64)


def f32_to_bf16_bits(x):
    """Round-to-nearest-even f32 -> bf16 bits."""
    u = np.asarray(x, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


# ---------------------------------------------------------------------------
# A small parser for MLIR's generic op form.

OP_RE = re.compile(
    r'^(?:(?P<res>%[\w]+)(?::(?P<nres>\d+))? = )?"(?P<name>[\w.]+)"'
    r'\((?P<operands>[^)]*)\)(?P<rest>.*)$')
BLOCK_RE = re.compile(r"^\^bb\d+(?:\((?P<args>.*)\))?:$")


class Op:
    def __init__(self, name, results, operands, text):
        self.name = name
        self.results = results
        self.operands = operands
        self.text = text  # the op's own line(s), for attributes and types
        self.regions = []  # list of (arg names, ops)

    def attr_ints(self, key):
        m = re.search(key + r" = array<i\d+(?:: ([-\d, ]*))?>", self.text)
        if not m:
            raise ValueError(f"{self.name}: no {key} in {self.text}")
        return [int(v) for v in m.group(1).split(",")] if m.group(1) else []

    def alignment(self):
        m = re.search(r"alignment = (\d+) : i64", self.text)
        return int(m.group(1)) if m else None

    def result_type(self):
        return self.text.rsplit("->", 1)[1].strip()


def split_top(s):
    """Splits on commas outside <> () []."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_ops(lines, pos):
    """Parses ops up to a line starting with '})'; returns (ops, pos)."""
    ops = []
    while pos < len(lines):
        line = lines[pos].strip()
        if not line or line.startswith("#") or line.startswith("module"):
            pos += 1
            continue
        if line.startswith("})") or line.startswith("}, {") or line == "}":
            return ops, pos
        m = OP_RE.match(line)
        if not m:
            raise ValueError(f"cannot parse: {line}")
        results = []
        if m.group("res"):
            n = int(m.group("nres") or 1)
            results = ([m.group("res")] if n == 1 else
                       [f"{m.group('res')}#{i}" for i in range(n)])
        operands = [o for o in split_top(m.group("operands"))]
        op = Op(m.group("name"), results, operands, line)
        pos += 1
        if line.endswith("({"):
            while True:
                args = []
                bm = BLOCK_RE.match(lines[pos].strip())
                if bm:
                    if bm.group("args"):
                        args = [a.split(":")[0].strip()
                                for a in split_top(bm.group("args"))]
                    pos += 1
                body, pos = parse_ops(lines, pos)
                op.regions.append((args, body))
                closing = lines[pos].strip()
                op.text += " " + closing
                pos += 1
                if closing.startswith("}, {"):
                    continue
                break
        ops.append(op)
    return ops, pos


def parse_module(text):
    lines = text.splitlines()
    funcs = {}
    for i, line in enumerate(lines):
        s = line.strip()
        if '"func.func"()' in s:
            name = re.search(r'sym_name = "(\w+)"', s).group(1)
            ops, _ = parse_ops(lines, i)
            funcs[name] = ops[0]
    return funcs


def vector_shape(ty):
    m = re.match(r"vector<([\dx]+)x(\w+)>", ty)
    dims = [int(d) for d in m.group(1).split("x")]
    return dims, m.group(2)


# ---------------------------------------------------------------------------
# The interpreter.


class Emulator:
    def __init__(self, mutate):
        self.mutate = mutate
        self.stores = {}  # id(memref) -> write counts
        self.mma_count = 0

    # Host side --------------------------------------------------------------
    def run_func(self, func, args):
        argnames, body = func.regions[0]
        env = dict(zip(argnames, args))
        for op in body:
            if op.name == "arith.constant":
                env[op.results[0]] = self.constant(op, lanes=False)
            elif op.name == "memref.collapse_shape":
                src = env[op.operands[0]]
                shape = [int(d) for d in re.search(
                    r"-> memref<([\dx]+)x\w+>", op.text).group(1).split("x")]
                view = src.reshape(shape)
                assert np.shares_memory(view, src)
                env[op.results[0]] = view
            elif op.name == "gpu.launch":
                self.launch(op, env)
            elif op.name in ("memref.dealloc", "func.return"):
                pass
            else:
                raise NotImplementedError(f"host op {op.name}")

    def launch(self, op, env):
        sizes = [int(env[v]) for v in op.operands[:6]]
        grid, block = sizes[:3], sizes[3:]
        assert block == [LANES, 1, 1], f"expected one warp per block: {block}"
        args, body = op.regions[0]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    lenv = dict(env)
                    ids = [bx, by, bz]
                    for i in range(3):
                        lenv[args[i]] = np.full(LANES, ids[i], np.int64)
                    lenv[args[3]] = np.arange(LANES, dtype=np.int64)
                    lenv[args[4]] = np.zeros(LANES, np.int64)
                    lenv[args[5]] = np.zeros(LANES, np.int64)
                    for i in range(6):
                        lenv[args[6 + i]] = np.full(LANES, sizes[i], np.int64)
                    self.run_ops(body, lenv)

    # Device side ------------------------------------------------------------
    def constant(self, op, lanes=True):
        m = re.search(r"value = (-?\d+) : index", op.text)
        if m:
            v = int(m.group(1))
            return np.full(LANES, v, np.int64) if lanes else v
        m = re.search(r"value = dense<([-\d.e+]+)> : (vector<[^>]+>)", op.text)
        if m:
            dims, elem = vector_shape(m.group(2))
            dtype = {"f16": np.float16, "f32": np.float32,
                     "bf16": np.uint16}[elem]
            assert float(m.group(1)) == 0.0
            return np.zeros([LANES] + dims, dtype)
        raise NotImplementedError(op.text)

    def get(self, env, name):
        v = env[name]
        if isinstance(v, (int, np.integer)):
            return np.full(LANES, v, np.int64)
        return v

    def run_ops(self, ops, env):
        for op in ops:
            n = op.name
            o = [self.get(env, x) for x in op.operands] if n != "scf.for" else None
            if n == "arith.constant":
                r = self.constant(op)
            elif n == "arith.addi":
                r = o[0] + o[1]
            elif n == "arith.muli":
                r = o[0] * o[1]
            elif n == "arith.divui":
                r = o[0] // o[1]
            elif n == "arith.remui":
                r = o[0] % o[1]
            elif n == "vector.load":
                r = self.load(op, env[op.operands[0]], o[1], o[2])
            elif n == "vector.store":
                self.store(op, o[0], env[op.operands[1]], o[2], o[3])
                continue
            elif n == "vector.insert":
                pos = tuple(op.attr_ints("static_position"))
                r = o[1].copy()
                r[(slice(None),) + pos] = o[0]
            elif n == "vector.extract":
                pos = tuple(op.attr_ints("static_position"))
                r = o[0][(slice(None),) + pos]
            elif n == "vector.bitcast":
                assert o[0].dtype == np.uint16 and o[0].shape == (LANES, 2)
                lo = o[0][:, 0].astype(np.uint32)
                hi = o[0][:, 1].astype(np.uint32)
                r = (lo | (hi << 16)).reshape(LANES, 1)
            elif n == "vector.from_elements":
                dims, _ = vector_shape(op.result_type())
                r = np.stack(o, axis=1).reshape([LANES] + dims)
            elif n == "nvgpu.mma.sync":
                assert "mmaShape = [16, 8, 16]" in op.text, op.text
                r = self.nvgpu_mma(o[0], o[1], o[2])
            elif n == "nvvm.mma.sync":
                r = self.nvvm_mma(op, o)
            elif n == "llvm.extractvalue":
                r = o[0][op.attr_ints("position")[0]]
            elif n == "scf.for":
                results = self.scf_for(op, env)
                for name, v in zip(op.results, results):
                    env[name] = v
                if len(op.results) == 1:
                    env[op.results[0] + "#0"] = results[0]
                continue
            elif n == "scf.yield":
                return o
            elif n == "gpu.terminator":
                return None
            else:
                raise NotImplementedError(f"device op {n}")
            env[op.results[0]] = r
            if len(op.results) == 1:
                env[op.results[0] + "#0"] = r
        return None

    def scf_for(self, op, env):
        lb, ub, step = (self.get(env, x) for x in op.operands[:3])
        for v in (lb, ub, step):
            assert (v == v[0]).all(), "divergent loop bounds"
        carried = [self.get(env, x) for x in op.operands[3:]]
        args, body = op.regions[0]
        for iv in range(int(lb[0]), int(ub[0]), int(step[0])):
            lenv = dict(env)
            lenv[args[0]] = np.full(LANES, iv, np.int64)
            for a, v in zip(args[1:], carried):
                lenv[a] = v
            carried = self.run_ops(body, lenv)
        return carried

    def flat_offsets(self, op, mem, i, j, n):
        rows, cols = mem.shape
        if ((i < 0) | (i >= rows) | (j < 0) | (j + n > cols)).any():
            raise AssertionError(f"out-of-bounds access: {op.text}")
        flat = i * cols + j
        align = op.alignment()
        if align is not None:
            if ((flat * mem.itemsize) % align != 0).any():
                raise AssertionError(f"misaligned access: {op.text}")
        return flat

    def load(self, op, mem, i, j):
        dims, _ = vector_shape(op.result_type())
        n = dims[0]
        self.flat_offsets(op, mem, i, j, n)
        return np.stack([mem[i, j + e] for e in range(n)], axis=1)

    def store(self, op, val, mem, i, j):
        n = val.shape[1]
        self.flat_offsets(op, mem, i, j, n)
        counts = self.stores.setdefault(id(mem), (mem, np.zeros(mem.shape, int)))[1]
        for e in range(n):
            mem[i, j + e] = val[:, e]
            np.add.at(counts, (i, j + e), 1)

    # mma.sync --------------------------------------------------------------
    def apply_mutation(self, a_rows, b_rows, c):
        """a_rows: 4 register rows [32, 2]; b_rows: 2 rows; c: [32, 4]."""
        if self.mutate == "swap-b-rows":
            b_rows = [b_rows[1], b_rows[0]]
        elif self.mutate == "swap-a-rows":
            a_rows = [a_rows[0], a_rows[2], a_rows[1], a_rows[3]]
        elif self.mutate == "swap-b-pair":
            b_rows = [r[:, ::-1] for r in b_rows]
        elif self.mutate == "swap-c-rows":
            c = c[:, [2, 3, 0, 1]]
        return a_rows, b_rows, c

    def nvgpu_mma(self, a, b, c):
        self.mma_count += 1
        assert a.shape == (LANES, 4, 2) and a.dtype == np.float16
        assert b.shape == (LANES, 2, 2) and b.dtype == np.float16
        assert c.shape == (LANES, 2, 2) and c.dtype == np.float32
        a_rows = [a[:, r].astype(np.float64) for r in range(4)]
        b_rows = [b[:, r].astype(np.float64) for r in range(2)]
        cf = c.reshape(LANES, 4)  # c0 c1 | c2 c3: row-major
        a_rows, b_rows, cf = self.apply_mutation(a_rows, b_rows, cf)
        d = isa_mma_m16n8k16(np.concatenate(a_rows, axis=1),
                             np.concatenate(b_rows, axis=1), cf)
        return d.reshape(LANES, 2, 2)

    def nvvm_mma(self, op, o):
        self.mma_count += 1
        assert "shape = #nvvm.shape<m = 16, n = 8, k = 16>" in op.text
        assert "layoutA = #nvvm.mma_layout<row>" in op.text
        assert "layoutB = #nvvm.mma_layout<col>" in op.text
        assert "multiplicandAPtxType = #nvvm.mma_type<bf16>" in op.text
        seg = op.attr_ints("operandSegmentSizes")
        assert seg == [4, 2, 4], seg

        def unpack(reg):  # .bf16x2: element 0 in the low half
            lo = (reg & 0xFFFF).astype(np.uint16)
            hi = (reg >> 16).astype(np.uint16)
            return np.stack([bf16_bits_to_f64(lo), bf16_bits_to_f64(hi)], axis=1)

        a_rows = [unpack(r) for r in o[0:4]]
        b_rows = [unpack(r) for r in o[4:6]]
        cf = np.stack(o[6:10], axis=1).astype(np.float32)
        a_rows, b_rows, cf = self.apply_mutation(a_rows, b_rows, cf)
        d = isa_mma_m16n8k16(np.concatenate(a_rows, axis=1),
                             np.concatenate(b_rows, axis=1), cf)
        return [d[:, i] for i in range(4)]


# ---------------------------------------------------------------------------
# Cases.

EXT = """  %{wide} = memref.alloc() : memref<{shape}xf32>
  linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = [{its}]}}
      ins(%{src} : memref<{shape}x{et}>) outs(%{wide} : memref<{shape}xf32>) {{
  ^bb0(%in: {et}, %out: f32):
    %0 = arith.extf %in : {et} to f32
    linalg.yield %0 : f32
  }}
"""


def case_ir(et, m, n, k, rank3):
    x_shape = (1, m, k) if rank3 else (m, k)
    xs = "x".join(map(str, x_shape))
    ir = ["#id2 = affine_map<(d0, d1) -> (d0, d1)>",
          "#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
          "#mk = affine_map<(d0, d1, d2) -> (d0, d2)>",
          "#nk = affine_map<(d0, d1, d2) -> (d1, d2)>",
          "#mn = affine_map<(d0, d1, d2) -> (d0, d1)>",
          f"func.func @mm(%x: memref<{xs}x{et}>, %w: memref<{n}x{k}x{et}>, "
          f"%c: memref<{m}x{n}xf32>) {{"]
    ir.append(EXT.format(wide="xf", src="x", shape=xs, et=et,
                         idm=f"#id{len(x_shape)}",
                         its=", ".join(['"parallel"'] * len(x_shape))))
    a = "xf"
    if rank3:
        ir.append(f"  %xv = memref.collapse_shape %xf [[0, 1], [2]] : "
                  f"memref<{xs}xf32> into memref<{m}x{k}xf32>")
        a = "xv"
    ir.append(EXT.format(wide="wf", src="w", shape=f"{n}x{k}", et=et,
                         idm="#id2", its='"parallel", "parallel"'))
    ir.append(f"""  linalg.generic {{indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%{a}, %wf : memref<{m}x{k}xf32>, memref<{n}x{k}xf32>) outs(%c : memref<{m}x{n}xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }}
  memref.dealloc %xf : memref<{xs}xf32>
  memref.dealloc %wf : memref<{n}x{k}xf32>
  return
}}""")
    return "\n".join(ir) + "\n", x_shape


CASES = [
    # (element type, M, N, K, rank-3 input)
    ("f16", 16, 8, 16, False),   # one tile, one k step
    ("f16", 32, 64, 48, False),  # 4 n-subtiles per warp, 2 x 2 blocks
    ("f16", 48, 24, 32, True),   # N % 32 != 0: 1 subtile; collapsed input
    ("bf16", 32, 64, 32, True),
    ("bf16", 16, 40, 16, False),
]


def run_case(attn_opt, et, m, n, k, rank3, mutate, rng, workdir):
    ir, x_shape = case_ir(et, m, n, k, rank3)
    path = os.path.join(workdir, f"mm_{et}_{m}x{n}x{k}.mlir")
    with open(path, "w") as f:
        f.write(ir)
    out = subprocess.run([attn_opt, path, "--attn-gpu-mma-matmul",
                          "--mlir-print-op-generic"], check=True,
                         capture_output=True, text=True).stdout
    func = parse_module(out)["mm"]
    names = [op.name for op in func.regions[0][1]]
    assert "gpu.launch" in names, "the pass did not rewrite the contraction"
    assert "linalg.generic" not in names, names

    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    c0 = rng.standard_normal((m, n)).astype(np.float32)
    if et == "f16":
        xs, ws = x.astype(np.float16), w.astype(np.float16)
        xv, wv = xs.astype(np.float64), ws.astype(np.float64)
    else:
        xs, ws = f32_to_bf16_bits(x), f32_to_bf16_bits(w)
        xv, wv = bf16_bits_to_f64(xs), bf16_bits_to_f64(ws)
    c = c0.copy()
    emu = Emulator(mutate)
    emu.run_func(func, [xs, ws, c])
    expected = c0.astype(np.float64) + xv.reshape(m, k) @ wv.T
    err = float(np.max(np.abs(c - expected)))
    mag = max(1.0, float(np.max(np.abs(expected))))
    counts = emu.stores.get(id(c), (None, np.zeros(c.shape, int)))[1]
    once = bool((counts == 1).all())
    mmas = (m // 16) * (n // 8) * (k // 16)
    ok = err <= 1e-5 * mag and once and emu.mma_count == mmas
    print(f"{'PASS' if ok else 'FAIL'} {et} M={m} N={n} K={k}"
          f"{' (rank-3 x)' if rank3 else ''}: max abs err {err:.3e}, "
          f"C stored once: {once}, mma.sync executed: {emu.mma_count}/{mmas}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn-opt", required=True)
    parser.add_argument("--mutate", default="none",
                        choices=["none", "swap-b-rows", "swap-a-rows",
                                 "swap-b-pair", "swap-c-rows"])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    failures = 0
    with tempfile.TemporaryDirectory() as workdir:
        for case in CASES:
            if not run_case(args.attn_opt, *case, args.mutate, rng, workdir):
                failures += 1
    print(f"{len(CASES) - failures} passed, {failures} failed"
          f" (mutation: {args.mutate})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
