#!/usr/bin/env python3
"""Emulates the tensor-core flash-attention kernels of attn-gpu-flash-attention.

For each case this script writes an f16/bf16 attn.sdpa, runs
`attn-opt --pass-pipeline=builtin.module(func.func(attn-gpu-flash-attention))
--mlir-print-op-generic` on it and *interprets the IR the pass emitted*: the
host ops around the gpu.launch, then the launch body for every thread block
with all its threads (several warps) executed in lockstep, each SSA value
holding one value per thread. Every index computation, global and shared
load and store, fragment insert/extract, shuffle, mask, exp and loop bound
is the one the pass generates.

Only the warp-wide mma.sync m16n8k16 is modelled from the PTX ISA fragment
layout, independently of the pass (the functions are shared with
mma_fragment_emulator.py, whose own test checks them), per warp of 32 lanes.
gpu.shuffle xor exchanges values between lanes of a warp. scf.if runs its
region under a lane mask.

Besides comparing the result with the numpy reference (test/reference,
attn_ref.sdpa, computed in float64 from the same f16/bf16 inputs), the
emulator checks what lockstep execution would otherwise hide:
  * shared-memory races: a thread reading a shared element that another
    thread wrote since the last gpu.barrier, or writing one that another
    thread read or wrote since then (a missing barrier);
  * every global and shared access in bounds and as aligned as its
    `alignment` attribute claims; every output element written exactly once.

--mutate drop-barriers ignores every gpu.barrier, drop-leading-barrier only
the one that starts each key step (which keeps the next step's shared-memory
writes from overtaking slower warps' reads); the race check must then fail.

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU: it checks the kernel's
indexing, synchronization and numerics against the documented fragment
layout, not the hardware, the NVVM/PTX lowering or ptxas.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "reference"))
import attn_ref  # noqa: E402
from mma_fragment_emulator import (  # noqa: E402
    bf16_bits_to_f64, f32_to_bf16_bits, isa_a_coord, isa_b_coord,
    isa_c_coord, parse_module, vector_shape)

WARP = 32


def _coords(coord, n):
    rows = np.array([[coord(l, i)[0] for i in range(n)] for l in range(WARP)])
    cols = np.array([[coord(l, i)[1] for i in range(n)] for l in range(WARP)])
    return rows, cols


A_RC, B_RC, C_RC = _coords(isa_a_coord, 8), _coords(isa_b_coord, 4), \
    _coords(isa_c_coord, 4)


def _check_cover(rc, shape):
    seen = np.zeros(shape, int)
    np.add.at(seen, rc, 1)
    assert (seen == 1).all(), "ISA model: fragments must cover the matrix once"


_check_cover(A_RC, (16, 16))
_check_cover(B_RC, (16, 8))
_check_cover(C_RC, (16, 8))


def warp_mma(a, b, c):
    """a [32, 8], b [32, 4] float64; c [32, 4] f32 -> d [32, 4] (one warp)."""
    A = np.zeros((16, 16))
    A[A_RC] = a
    B = np.zeros((16, 8))
    B[B_RC] = b
    C = np.zeros((16, 8))
    C[C_RC] = c
    D = (A @ B + C).astype(np.float32)
    return D[C_RC]


def dtype_of(elem):
    return {"f16": np.float16, "f32": np.float32, "bf16": np.uint16,
            "i32": np.int32, "i64": np.int64, "i1": np.bool_,
            "index": np.int64}[elem]


def memref_type(text):
    m = re.search(r"memref<([\dx]+)x(\w+)(, #gpu.address_space<(\w+)>)?>",
                  text)
    shape = [int(d) for d in m.group(1).split("x")]
    return shape, m.group(2), m.group(4)


class Memory:
    """A buffer plus, for shared memory, the race-detection state."""

    def __init__(self, array, elem, shared=False):
        self.a = array
        self.elem = elem
        self.shared = shared
        self.writes = np.zeros(array.shape, int)
        if shared:
            n = array.size
            self.w_epoch = np.full(n, -1)
            self.w_thread = np.full(n, -1)
            self.r_epoch = np.full(n, -1)
            self.r_thread = np.full(n, -1)  # -2: several readers


class RaceError(AssertionError):
    pass


class Emulator:
    def __init__(self, mutate=None):
        self.mutate = mutate
        self.mma_count = 0
        self.epoch = 0

    # Values -----------------------------------------------------------------
    def lanes(self, v):
        if isinstance(v, np.ndarray) and v.ndim >= 1 and \
                v.shape[0] == self.threads and not isinstance(v, Memory):
            return v
        return np.full(self.threads, v) if not isinstance(v, np.ndarray) \
            else np.broadcast_to(v, (self.threads,) + v.shape).copy()

    def get(self, env, name):
        v = env[name]
        if isinstance(v, (Memory, list)):
            return v
        return self.lanes(v)

    def constant(self, op):
        t = op.text
        m = re.search(r"value = (-?\d+) : (index|i32|i64)", t)
        if m:
            return np.int64(int(m.group(1)))
        m = re.search(r"value = (true|false)", t)
        if m:
            return np.bool_(m.group(1) == "true")
        m = re.search(r"value = (0x[0-9A-F]+) : f32", t)
        if m:
            return np.array([int(m.group(1), 16)], np.uint32).view(
                np.float32)[0]
        m = re.search(r"value = (-?[\d.]+(?:e[+-]?\d+)?) : f32", t)
        if m:
            return np.float32(float(m.group(1)))
        m = re.search(r"value = dense<([-\d.e+]+)> : (vector<[^>]+>)", t)
        if m:
            dims, elem = vector_shape(m.group(2))
            assert float(m.group(1)) == 0.0, t
            return np.zeros(dims, dtype_of(elem))
        raise NotImplementedError(t)

    # Host ---------------------------------------------------------------------
    def run_func(self, func, inputs):
        argnames, body = func.regions[0]
        env = {}
        for name, arr in zip(argnames, inputs):
            env[name] = arr
        result = None
        for op in body:
            n = op.name
            if n == "arith.constant":
                env[op.results[0]] = self.constant(op)
            elif n == "bufferization.to_buffer":
                arr = env[op.operands[0]]
                shape, elem, _ = memref_type(op.text.rsplit("->", 1)[1].strip())
                assert list(arr.shape) == shape
                env[op.results[0]] = Memory(arr, elem)
            elif n == "memref.alloc":
                shape, elem, _ = memref_type(op.text)
                fill = 0xFFFF if elem == "bf16" else np.nan
                env[op.results[0]] = Memory(
                    np.full(shape, fill, dtype_of(elem)), elem)
            elif n == "gpu.launch":
                self.launch(op, env)
            elif n == "bufferization.to_tensor":
                result = env[op.operands[0]]
            elif n == "func.return":
                pass
            else:
                raise NotImplementedError(f"host op {n}")
        return result

    def launch(self, op, env):
        sizes = [int(env[v]) for v in op.operands[:6]]
        grid, block = sizes[:3], sizes[3:]
        assert block[1] == block[2] == 1 and block[0] % WARP == 0, block
        self.threads = block[0]
        args, body = op.regions[0]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    lenv = dict(env)
                    ids = [bx, by, bz]
                    for i in range(3):
                        lenv[args[i]] = np.int64(ids[i])
                    lenv[args[3]] = np.arange(self.threads, dtype=np.int64)
                    lenv[args[4]] = np.int64(0)
                    lenv[args[5]] = np.int64(0)
                    for i in range(6):
                        lenv[args[6 + i]] = np.int64(sizes[i])
                    self.run_ops(body, lenv, np.ones(self.threads, bool))

    # Device -------------------------------------------------------------------
    def run_ops(self, ops, env, mask):
        for pos, op in enumerate(ops):
            n = op.name
            if n == "scf.for":
                results = self.scf_for(op, env, mask)
                for i, v in enumerate(results):
                    env[f"{op.results[0].split('#')[0]}#{i}"] = v
                if len(op.results) == 1:
                    env[op.results[0]] = results[0]
                continue
            if n == "scf.if":
                cond = self.get(env, op.operands[0])
                assert not op.results, "scf.if with results"
                self.run_ops(op.regions[0][1], dict(env), mask & cond)
                continue
            if n == "scf.yield":
                return [self.get(env, x) for x in op.operands]
            if n == "gpu.terminator":
                return None
            if n == "gpu.barrier":
                assert mask.all(), "barrier under divergent control flow"
                dropped = self.mutate == "drop-barriers" or (
                    self.mutate == "drop-leading-barrier" and pos == 0)
                if not dropped:
                    self.epoch += 1
                continue
            r = self.eval(op, env, mask)
            if r is None:
                continue
            if len(op.results) > 1:
                for name, v in zip(op.results, r):
                    env[name] = v
            else:
                env[op.results[0]] = r
        return None

    def eval(self, op, env, mask):
        n = op.name
        if n == "arith.constant":
            return self.constant(op)
        if n == "memref.alloca":
            shape, elem, space = memref_type(op.text)
            assert space == "workgroup", op.text
            fill = 0xFFFF if elem == "bf16" else np.nan
            return Memory(np.full(shape, fill, dtype_of(elem)), elem,
                          shared=True)
        o = [self.get(env, x) for x in op.operands]
        if n == "arith.addi":
            return o[0] + o[1]
        if n == "arith.subi":
            return o[0] - o[1]
        if n == "arith.muli":
            return o[0] * o[1]
        if n == "arith.divui":
            assert (o[0] >= 0).all() and (o[1] > 0).all()
            return o[0] // o[1]
        if n == "arith.remui":
            assert (o[0] >= 0).all() and (o[1] > 0).all()
            return o[0] % o[1]
        if n == "arith.maxsi":
            return np.maximum(o[0], o[1])
        if n == "arith.minsi":
            return np.minimum(o[0], o[1])
        if n == "arith.index_cast":
            return o[0].astype(np.int64)
        if n == "arith.andi":
            return o[0] & o[1]
        if n == "arith.cmpi":
            pred = int(re.search(r"predicate = (\d+)", op.text).group(1))
            # eq ne slt sle sgt sge ult ule ugt uge
            f = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal,
                 4: np.greater, 5: np.greater_equal, 6: np.less,
                 7: np.less_equal, 8: np.greater, 9: np.greater_equal}[pred]
            return f(o[0], o[1])
        if n == "arith.cmpf":
            pred = int(re.search(r"predicate = (\d+)", op.text).group(1))
            f = {1: np.equal, 2: np.greater, 3: np.greater_equal,
                 4: np.less, 5: np.less_equal}[pred]  # ordered predicates
            return f(o[0], o[1]) & ~np.isnan(o[0]) & ~np.isnan(o[1])
        if n == "arith.select":
            c = o[0].reshape(o[0].shape + (1,) * (o[1].ndim - o[0].ndim))
            return np.where(c, o[1], o[2])
        if n in ("arith.addf", "arith.subf", "arith.mulf", "arith.divf",
                 "arith.maximumf"):
            a, b = o[0].astype(np.float32), o[1].astype(np.float32)
            with np.errstate(invalid="ignore", divide="ignore",
                             over="ignore"):
                r = {"arith.addf": np.add, "arith.subf": np.subtract,
                     "arith.mulf": np.multiply, "arith.divf": np.divide,
                     "arith.maximumf": np.maximum}[n](a, b)
            return r.astype(np.float32)
        if n == "math.exp":
            with np.errstate(over="ignore", invalid="ignore"):
                return np.exp(o[0].astype(np.float64)).astype(np.float32)
        if n == "arith.truncf":
            target = re.search(r"-> (?:vector<[\dx]+x)?(\w+)", op.text).group(1)
            if target == "bf16":
                return f32_to_bf16_bits(o[0])
            return o[0].astype(np.float16)
        if n == "vector.load":
            return self.load(op, o[0], o[1:], mask)
        if n == "vector.store":
            self.store(op, o[0], o[1], o[2:], mask, vector=True)
            return None
        if n == "memref.load":
            return self.load(op, o[0], o[1:], mask, scalar=True)
        if n == "memref.store":
            self.store(op, o[0], o[1], o[2:], mask, vector=False)
            return None
        if n == "vector.insert":
            pos = tuple(op_ints(op, "static_position"))
            r = o[1].copy()
            r[(slice(None),) + pos] = o[0]
            return r
        if n == "vector.extract":
            pos = tuple(op_ints(op, "static_position"))
            return o[0][(slice(None),) + pos]
        if n == "vector.from_elements":
            dims, _ = vector_shape(op.text.rsplit("->", 1)[1].strip())
            return np.stack(o, axis=1).reshape([self.threads] + dims)
        if n == "vector.bitcast":
            assert o[0].dtype == np.uint16 and o[0].shape[1:] == (2,)
            lo = o[0][:, 0].astype(np.uint32)
            hi = o[0][:, 1].astype(np.uint32)
            return (lo | (hi << 16)).reshape(self.threads, 1)
        if n == "gpu.shuffle":
            assert "shuffle_mode xor" in op.text, op.text
            assert (o[2] == WARP).all(), "shuffle width must be the warp"
            lane = np.arange(self.threads)
            src = (lane // WARP) * WARP + ((lane % WARP) ^ o[1])
            return (o[0][src], np.ones(self.threads, bool))
        if n == "nvgpu.mma.sync":
            assert "mmaShape = [16, 8, 16]" in op.text, op.text
            assert mask.all(), "mma.sync under divergent control flow"
            return self.nvgpu_mma(o[0], o[1], o[2])
        if n == "nvvm.mma.sync":
            assert mask.all(), "mma.sync under divergent control flow"
            return self.nvvm_mma(op, o)
        if n == "llvm.extractvalue":
            return o[0][op_ints(op, "position")[0]]
        raise NotImplementedError(f"device op {n}")

    def scf_for(self, op, env, mask):
        lb, ub, step = (self.get(env, x)[mask] for x in op.operands[:3])
        for v in (lb, ub, step):
            assert (v == v[0]).all(), "divergent loop bounds"
        carried = [self.get(env, x) for x in op.operands[3:]]
        args, body = op.regions[0]
        for iv in range(int(lb[0]), int(ub[0]), int(step[0])):
            lenv = dict(env)
            lenv[args[0]] = np.int64(iv)
            for a, v in zip(args[1:], carried):
                lenv[a] = v
            carried = self.run_ops(body, lenv, mask)
        return carried

    # Memory -------------------------------------------------------------------
    def offsets(self, op, mem, idx, width, mask):
        shape = mem.a.shape
        idx = [i[mask] for i in idx]
        for d, i in enumerate(idx):
            hi = shape[d] - (width if d == len(shape) - 1 else 1)
            if ((i < 0) | (i > hi)).any():
                raise AssertionError(f"out-of-bounds access: {op.text[:200]}")
        flat = np.ravel_multi_index(idx, shape)
        m = re.search(r"alignment = (\d+) : i64", op.text)
        if m and ((flat * mem.a.itemsize) % int(m.group(1)) != 0).any():
            raise AssertionError(f"misaligned access: {op.text[:200]}")
        return flat

    def track(self, mem, flat, threads, write):
        e = self.epoch
        for w in range(flat.shape[1]):
            f, t = flat[:, w], threads
            if write:
                bad = ((mem.r_epoch[f] == e) & (mem.r_thread[f] != t)) | \
                    ((mem.w_epoch[f] == e) & (mem.w_thread[f] != t))
                if bad.any():
                    raise RaceError("shared-memory race: write after another "
                                    "thread's access with no barrier between")
                mem.w_epoch[f] = e
                mem.w_thread[f] = t
            else:
                bad = (mem.w_epoch[f] == e) & (mem.w_thread[f] != t)
                if bad.any():
                    raise RaceError("shared-memory race: read of another "
                                    "thread's write with no barrier between")
                same = (mem.r_epoch[f] == e) & (mem.r_thread[f] != t)
                mem.r_thread[f] = np.where(same, -2, t)
                mem.r_epoch[f] = e

    def load(self, op, mem, idx, mask, scalar=False):
        width = 1 if scalar else vector_shape(op.text.rsplit("->", 1)[1].strip())[0][0]
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        vals = np.zeros((self.threads, width), mem.a.dtype)
        vals[mask] = mem.a.reshape(-1)[flat]
        if mem.shared:
            self.track(mem, flat, np.nonzero(mask)[0], write=False)
        if mem.elem == "bf16":
            pass
        return vals[:, 0] if scalar else vals

    def store(self, op, val, mem, idx, mask, vector):
        width = val.shape[1] if vector else 1
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        v = val.reshape(self.threads, width)[mask]
        if mem.shared:
            self.track(mem, flat, np.nonzero(mask)[0], write=True)
        mem.a.reshape(-1)[flat] = v
        np.add.at(mem.writes.reshape(-1), flat.reshape(-1), 1)

    # mma.sync -----------------------------------------------------------------
    def per_warp(self, a, b, c):
        d = np.zeros((self.threads, 4), np.float32)
        for w in range(self.threads // WARP):
            s = slice(w * WARP, (w + 1) * WARP)
            d[s] = warp_mma(a[s], b[s], c[s])
        return d

    def nvgpu_mma(self, a, b, c):
        self.mma_count += 1
        t = self.threads
        assert a.shape == (t, 4, 2) and a.dtype == np.float16
        assert b.shape == (t, 2, 2) and b.dtype == np.float16
        assert c.shape == (t, 2, 2) and c.dtype == np.float32
        d = self.per_warp(a.reshape(t, 8).astype(np.float64),
                          b.reshape(t, 4).astype(np.float64), c.reshape(t, 4))
        return d.reshape(t, 2, 2)

    def nvvm_mma(self, op, o):
        self.mma_count += 1
        assert "shape = #nvvm.shape<m = 16, n = 8, k = 16>" in op.text
        assert "multiplicandAPtxType = #nvvm.mma_type<bf16>" in op.text

        def unpack(reg):  # .bf16x2: element 0 in the low half
            lo = (reg & 0xFFFF).astype(np.uint16)
            hi = (reg >> 16).astype(np.uint16)
            return np.stack([bf16_bits_to_f64(lo), bf16_bits_to_f64(hi)],
                            axis=1)

        a = np.concatenate([unpack(r) for r in o[0:4]], axis=1)
        b = np.concatenate([unpack(r) for r in o[4:6]], axis=1)
        c = np.stack(o[6:10], axis=1).astype(np.float32)
        d = self.per_warp(a, b, c)
        return [d[:, i] for i in range(4)]  # the LLVM struct's members


def op_ints(op, key):
    m = re.search(key + r" = array<i\d+(?:: ([-\d, ]*))?>", op.text)
    return [int(v) for v in m.group(1).split(",")] if m.group(1) else []


# ---------------------------------------------------------------------------
# Cases.

CASES = [
    # name, elem, B, Hq, Hkv, Sq, Sk, Dk, Dv, causal, lengths
    ("f16 B=1 H=2 S=64 D=64", "f16", 1, 2, 2, 64, 64, 64, 64, False, None),
    ("f16 causal B=1 H=2 S=128 D=64", "f16", 1, 2, 2, 128, 128, 64, 64, True,
     None),
    ("f16 causal Sq=32 Sk=96 (bottom-right) D=32", "f16", 1, 1, 1, 32, 96, 32,
     32, True, None),
    ("f16 causal Sq=96 Sk=32 (rows see no key) D=16", "f16", 1, 1, 1, 96, 32,
     16, 16, True, None),
    ("f16 GQA Hq=4 Hkv=2 S=48 Dk=32 Dv=24", "f16", 1, 4, 2, 48, 48, 32, 24,
     False, None),
    ("f16 kv_lengths B=2 S=64 D=16", "f16", 2, 1, 1, 64, 64, 16, 16, False,
     [37, 64]),
    ("f16 D=128 S=32", "f16", 1, 1, 1, 32, 32, 128, 128, False, None),
    ("bf16 causal B=1 H=2 S=64 D=32", "bf16", 1, 2, 2, 64, 64, 32, 32, True,
     None),
]


def case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths):
    q = f"tensor<{b}x{hq}x{sq}x{dk}x{elem}>"
    k = f"tensor<{b}x{hkv}x{sk}x{dk}x{elem}>"
    v = f"tensor<{b}x{hkv}x{sk}x{dv}x{elem}>"
    o = f"tensor<{b}x{hq}x{sq}x{dv}x{elem}>"
    args = f"%q: {q}, %k: {k}, %v: {v}"
    attrs = ""
    if lengths is not None:
        args += f", %len: tensor<{b}xi32>"
        attrs += f" kv_lengths(%len : tensor<{b}xi32>)"
    if causal:
        attrs += " causal"
    return (f"func.func @sdpa({args}) -> {o} {{\n"
            f"  %0 = attn.sdpa %q, %k, %v{attrs} : {q}, {k}, {v} -> {o}\n"
            f"  return %0 : {o}\n}}\n")


def to_f64(x, elem):
    return bf16_bits_to_f64(x).reshape(x.shape) if elem == "bf16" \
        else x.astype(np.float64)


def run_case(attn_opt, case, mutate, rng, workdir):
    name, elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths = case
    path = os.path.join(workdir, "case.mlir")
    with open(path, "w") as f:
        f.write(case_ir(elem, b, hq, hkv, sq, sk, dk, dv, causal, lengths))
    out = subprocess.run(
        [attn_opt, path, "--pass-pipeline=builtin.module(func.func("
         "attn-gpu-flash-attention))", "--mlir-print-op-generic"],
        check=True, capture_output=True, text=True).stdout
    assert out.count('"gpu.launch"') == 1, "the pass did not take the case"
    func = parse_module(out)["sdpa"]

    def operand(shape):
        x = rng.standard_normal(shape).astype(np.float32)
        return f32_to_bf16_bits(x) if elem == "bf16" else x.astype(np.float16)

    q = operand((b, hq, sq, dk))
    k = operand((b, hkv, sk, dk))
    v = operand((b, hkv, sk, dv))
    inputs = [q, k, v]
    if lengths is not None:
        inputs.append(np.array(lengths, np.int32))
    emu = Emulator(mutate)
    result = emu.run_func(func, inputs)
    assert (result.writes == 1).all(), "output elements not written once"
    got = to_f64(result.a, elem)
    ref = attn_ref.sdpa(to_f64(q, elem), to_f64(k, elem), to_f64(v, elem),
                        kv_lengths=lengths, causal=causal)
    # P is rounded to f16/bf16 before P V (as in FlashAttention-2), the
    # output to f16/bf16: tolerances relative to the output's magnitude.
    tol = 2e-2 if elem == "f16" else 6e-2
    err = np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))
    return err <= tol, err, emu.mma_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-opt", required=True)
    ap.add_argument("--mutate",
                    choices=["drop-barriers", "drop-leading-barrier"])
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as workdir:
        for case in CASES:
            try:
                ok, err, mmas = run_case(args.attn_opt, case, args.mutate,
                                         rng, workdir)
                msg = f"max rel err {err:.2e}, {mmas} mma.sync"
            except AssertionError as e:
                ok, msg = False, f"{type(e).__name__}: {e}"
            print(f"{'PASS' if ok else 'FAIL'} {case[0]}: {msg}")
            passed += ok
            failed += not ok
    print(f"{passed} passed, {failed} failed (mutation: "
          f"{args.mutate or 'none'})")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
