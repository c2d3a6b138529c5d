#!/usr/bin/env python3
"""An interpreter for the GPU kernels attnc's tensor-core passes emit.

Shared by mma_fragment_emulator.py (attn-gpu-mma-matmul) and
flash_mma_emulator.py (attn-gpu-flash-attention); gpu_model_emulator.py
reuses its parser and fragment layout to run whole compiled models. It parses MLIR's generic
op form and runs a function: its host ops, then each gpu.launch for every
thread block, all threads of a block in lockstep (each SSA value holds one
value per thread). So every index computation, load, store, fragment
insert/extract, shuffle, mask and loop bound is the one the pass emitted.

Only the warp-wide mma.sync m16n8k16 (row.col, f16/bf16 inputs, f32
accumulation) is modelled from the specification, independently of the
passes: the PTX ISA section "Matrix Fragments for mma.m16n8k16 with floating
point type" gives, for %laneid, groupID = %laneid >> 2 and
threadID_in_group = %laneid % 4, the matrix element each fragment element
a0..a7, b0..b3, c0..c3 / d0..d3 holds; the model scatters the fragments of
the 32 lanes of each warp into A (16x16), B (16x8, K x N) and C (16x8),
computes D = A * B + C and gathers D back. MLIR fragment vectors map to the
PTX registers as convert-nvgpu-to-nvvm lowers them (row r of a vector<4x2>
or vector<2x2> operand is register r, element 0 in the low half; the f32
vector<2x2> accumulator is c0, c1, c2, c3 row-major), which
mma-fragment-layout.test checks on the lowering itself.

Besides values, it checks what lockstep execution would otherwise hide:
shared-memory races (a thread reading an element another thread wrote since
the last gpu.barrier, or writing one another thread read or wrote since
then), every access in bounds and as aligned as its `alignment` attribute
claims; and it counts the writes of every buffer element.

Mutations (for tests that show the checks bite): swap-b-rows, swap-a-rows,
swap-b-pair, swap-c-rows corrupt the fragment layout in the mma model;
drop-barriers ignores every gpu.barrier; drop-leading-barrier the one that
starts a loop body; drop-load-masks makes every arith.minsi return its first
operand and every arith.select its true operand (the clamped, zero-selecting
loads of ragged edge tiles read past their buffers); drop-store-masks runs
every scf.if that guards a store to global memory unconditionally (the
masked stores of ragged edge tiles). For the sm_80 data movement:
drop-async-wait ignores every nvgpu.device_async_wait; drop-async-commit
every nvgpu.device_async_create_group (the copies stay uncommitted, which no
wait_group completes); async-wait-one-more
lets one more group stay pending than each wait allows (a pipeline one
stage too shallow); async-copy-wrong-stage writes every cp.async into the
next stage buffer (its leading index + 1, modulo the stages);
drop-zero-fill reads the whole chunk of every cp.async whatever its
srcElements; flip-ldmatrix-trans loads every ldmatrix with the opposite
.trans.

The sm_80 data movement the kernels use is modelled from the PTX ISA too:

- nvgpu.ldmatrix (ldmatrix.sync.aligned.m8n8.x1/x2/x4[.trans].shared.b16):
  lane l of a warp gives the shared-memory address of row l % 8 of matrix
  l / 8 (lanes 8 x4 and up ignored for .x1/.x2), each row 8 contiguous
  16-bit elements, 16-byte aligned; for matrix i every lane receives one
  pair, register i: row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of the
  8x8 matrix, or with .trans row and column swapped (elements [2 (l % 4)]
  [l / 4] and [2 (l % 4) + 1][l / 4]). Each element counts as read by the
  lane that receives it.
- nvgpu.device_async_copy (cp.async.ca/.cg.shared.global, 4/8/16 bytes,
  optional src-size): the source is read at issue (only srcElements of it;
  the rest of the destination is zero-filled), but nothing lands in shared
  memory until the thread's group holding the copy completes: from issue
  to completion the destination elements are in flight, and any access to
  them (by any thread) is a race. nvgpu.device_async_create_group
  (cp.async.commit_group) closes the thread's pending copies into a group;
  nvgpu.device_async_wait {numGroups = N} (cp.async.wait_group N) completes
  all but the thread's newest N groups, the copies then count as the
  issuing thread's writes at that point (other threads need a barrier
  before they read them). Both the source and the destination must be
  aligned to the copy size.

The sm_90a warpgroup MMA (nvvm.wgmma.*) is modelled from the PTX ISA too:

- wgmma.mma_async .m64nNk16 .f32.{f16,bf16} (A and B K-major, from shared
  memory): each 64-bit matrix descriptor is decoded ("Matrix Descriptor
  Format": start address >> 4 in bits 0-13, leading byte offset >> 4 in
  16-29, stride byte offset >> 4 in 32-45; a swizzle mode or base offset
  other than 0 is rejected as not modelled) and the operand gathered from
  the shared buffer at those addresses (shared buffers get addresses from
  0x410 up, 16-byte aligned, as memref.extract_aligned_pointer_as_index
  returns them) per the no-swizzle K-major layout: core matrices of 8 rows
  x 16 bytes, core matrix (i, j) at i * stride + j * leading byte offset.
  D = A B + D is scattered per the accumulator fragment (thread t of the
  warpgroup, register i: row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2),
  column 8 (i / 4) + 2 (t % 4) + i % 2).
- Async rules: the result registers (an LLVM struct) may be read only
  after a wgmma.wait_group completed the commit group holding the wgmma
  (chaining them into the next wgmma is allowed); its shared-memory
  sources must not be written until then; accumulator registers written by
  other instructions need a wgmma.fence before a wgmma reads them; and a
  shared-memory element written through the generic proxy (a store or a
  landed cp.async) needs a fence.proxy.async by the writing thread before
  wgmma (the async proxy) reads it. The wgmma's reads count as reads by
  another thread for the barrier race check.

The sm_90a Tensor Memory Accelerator (nvgpu.tma.create.descriptor on the
host, nvgpu.tma.async.load, nvgpu.mbarrier.*) follows tma_model.py's PTX
ISA / driver API model, shared with gpu_model_emulator.py: the tensor map
decoded from the encode call's arguments, the box written densely from its
destination address (which must be 128-byte aligned) with out-of-bounds
elements zero-filled, in flight (any access a race) until a
try_wait.parity on its mbarrier completes the phase it signals, and the
mbarrier's arrivals, transaction bytes and phases. Mutations:
drop-mbarrier-wait ignores every try_wait.parity, tma-wrong-box-coordinate
loads every box 8 rows further (coordinate 1 + 8), tma-expect-tx-short
halves every expect_tx byte count, tma-no-oob-fill leaves the
out-of-bounds elements of boxes unfilled (clamped reads instead of zeros).

Mutations for wgmma: drop-wgmma-wait, wgmma-wait-one-more (each wait lets
one more group stay pending), drop-wgmma-fence, drop-proxy-fence,
wgmma-swap-descriptor-offsets (leading and stride byte offsets exchanged
when decoding), wgmma-swap-d-rows (the accumulator fragment's rows g and
g + 8 exchanged).

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU: it checks the kernels'
indexing, synchronization and numerics against the documented fragment
layout, not the hardware, the NVVM/PTX lowering or ptxas.
"""

import re

import numpy as np

from tma_model import MBarriers, TensorMap, TmaError

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


def split_top(s, braces=False):
    """Splits on commas outside <> () [] (and {} with `braces`) and outside
    strings."""
    opening, closing = ("<([{", ">)]}") if braces else ("<([", ">)]")
    out, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in opening:
            depth += 1
        elif not quoted and ch in closing:
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
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




def _coords(coord, n):
    rows = np.array([[coord(l, i)[0] for i in range(n)] for l in range(LANES)])
    cols = np.array([[coord(l, i)[1] for i in range(n)] for l in range(LANES)])
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


# ---------------------------------------------------------------------------
# The PTX ISA model of wgmma.mma_async .m64nNk16 (f16/bf16 inputs, f32
# accumulation, A and B from shared memory through matrix descriptors).

WARPGROUP = 128


def decode_wgmma_descriptor(desc, mutate=None):
    """A 64-bit shared-memory matrix descriptor (PTX ISA "Matrix Descriptor
    Format", sm_90) -> (start address, leading dimension byte offset, stride
    dimension byte offset), in bytes. Bits 0-13: start address >> 4 (of the
    18-bit shared address); 16-29: leading byte offset >> 4; 32-45: stride
    byte offset >> 4; 49-51: matrix base offset; 62-63: swizzle mode (0 no
    swizzle, 1 128-byte, 2 64-byte, 3 32-byte). Only the no-swizzle mode
    with base offset 0 is modelled; anything else is rejected."""
    desc = int(desc) & ((1 << 64) - 1)
    swizzle = desc >> 62
    if swizzle != 0:
        raise NotImplementedError(f"wgmma descriptor swizzle mode {swizzle} "
                                  "is not modelled")
    if (desc >> 49) & 0x7:
        raise NotImplementedError("wgmma descriptor base offset is not "
                                  "modelled")
    unknown = desc & ~((0x3FFF) | (0x3FFF << 16) | (0x3FFF << 32) |
                       (0x7 << 49) | (0x3 << 62))
    if unknown:
        raise AssertionError(f"wgmma descriptor: reserved bits set: "
                             f"{desc:#x}")
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if mutate == "wgmma-swap-descriptor-offsets":
        lbo, sbo = sbo, lbo
    return start, lbo, sbo


def wgmma_kmajor_offsets(rows, lbo, sbo, elem_bytes=2, k=16):
    """Byte offsets [rows, k] from the start address of the elements of a
    K-major operand (A: M x K; B stored N x K) in the no-swizzle layout
    (PTX ISA "Shared Memory Matrix Layout"): core matrices of 8 rows x 16
    bytes, each row's 16 bytes contiguous and the 8 rows 16 bytes apart;
    the core matrix holding rows 8i..8i+7 and the j-th 16 bytes of K starts
    at i * (stride byte offset) + j * (leading byte offset)."""
    per = 16 // elem_bytes
    r = np.arange(rows)[:, None]
    c = np.arange(k)[None, :]
    return (r // 8) * sbo + (c // per) * lbo + (r % 8) * 16 + \
        (c % per) * elem_bytes


def wgmma_d_coord(tid, i):
    """Element d_i of the accumulator held by thread `tid` (0..127) of the
    warpgroup (PTX ISA "Matrix fragments for wgmma .m64nNk16", D f32): warp
    w = tid / 32 owns rows 16w..16w+15; with lane = tid % 32, row 16w +
    lane / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (lane % 4) + i % 2."""
    warp, lane = tid // LANES, tid % LANES
    row = 16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)
    return row, col


def wgmma_d_coords(n, mutate=None):
    tid = np.arange(WARPGROUP)[:, None]
    i = np.arange(n // 2)[None, :]
    if mutate == "wgmma-swap-d-rows":
        i = i ^ 2  # rows g and g + 8 exchanged
    return wgmma_d_coord(tid, i)


for _n in (8, 24, 64, 128, 256):
    _check_cover(wgmma_d_coords(_n), (64, _n))


def wgmma_compute(a, b, d, mutate=None):
    """D = A * B + D for one warpgroup: a [64, 16] and b [n, 16] (B^T:
    the K-major B) float64, d [128, n / 2] f32 registers -> new registers."""
    n = b.shape[0]
    rows, cols = wgmma_d_coords(n, mutate)
    D = np.zeros((64, n))
    D[rows, cols] = d
    D = (a @ b.T + D).astype(np.float32)
    return D[rows, cols]


class Regs(list):
    """An LLVM struct of registers (one per-thread array per member) and
    what the wgmma model needs to know about it: `written` is when
    (emulator clock) an instruction other than wgmma last wrote it, or None
    for a wgmma result; `wgmma` the in-flight record of the wgmma that
    produces it."""

    def __init__(self, values, written=None, wgmma=None):
        super().__init__(values)
        self.written = written
        self.wgmma = wgmma


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
    m = re.search(r"memref<([\dx]+)x(\w+)(?:, strided<[^>]*>)?"
                  r"(, #gpu.address_space<(\w+)>)?>", text)
    shape = [int(d) for d in m.group(1).split("x")]
    return shape, m.group(2), m.group(4)


def row_major(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return list(reversed(strides))


def memref_layout(text, shape):
    """(element strides, offset) of the layout of memref type `text`."""
    m = re.search(r"strided<\[([\d, ]*)\](?:, offset: (\d+))?>", text)
    if not m:
        return row_major(shape), 0
    return [int(v) for v in m.group(1).split(",")], int(m.group(2) or 0)


ELEM_OF_DTYPE = {np.float16: "f16", np.float32: "f32", np.uint16: "bf16",
                 np.int32: "i32", np.int64: "i64"}


class Memory:
    """A buffer plus, for shared memory, the race-detection state. Accesses
    address the allocation's elements (`base`, write counts `wbase`) at
    `off` + sum(index * `strides`): a strided view (memref.subview,
    memref.transpose, ...) shares them with the memory it views."""

    def __init__(self, array, elem, shared=False, writes=None):
        self.a = array
        self.elem = elem
        self.shared = shared
        self.writes = np.zeros(array.shape, int) if writes is None else writes
        assert array.flags.c_contiguous and self.writes.flags.c_contiguous
        self.base = array.reshape(-1)
        self.wbase = self.writes.reshape(-1)
        self.off = 0
        self.strides = row_major(array.shape)
        if shared:
            n = array.size
            self.inflight = np.zeros(n, int)  # cp.async writes not landed
            self.w_epoch = np.full(n, -1)
            self.w_thread = np.full(n, -1)
            self.r_epoch = np.full(n, -1)
            self.r_thread = np.full(n, -1)  # -2: several readers
            # wgmma: sources of in-flight wgmma (must not be overwritten),
            # and the thread whose generic-proxy write of an element no
            # fence.proxy.async has ordered before async-proxy reads yet.
            self.wgmma_reading = np.zeros(n, int)
            self.unfenced = np.full(n, -1)
            self.addr = None  # shared-state-space address

    def view(self, shape, strides, off):
        """The view of this memory's allocation with `shape`, element
        `strides` and offset `off` (those of a view op's result type),
        sharing data and counts."""
        assert not self.shared
        view = object.__new__(Memory)
        view.elem, view.shared = self.elem, False
        view.base, view.wbase, view.off = self.base, self.wbase, off
        view.strides = list(strides)
        last = off + sum((d - 1) * st for d, st in zip(shape, strides))
        assert 0 <= off and (0 in shape or last < self.base.size), \
            "view outside its allocation"
        view.a, view.writes = (
            np.lib.stride_tricks.as_strided(
                b[off:], shape, [st * b.itemsize for st in strides])
            for b in (self.base, self.wbase))
        return view


class SharedView:
    """A shared-memory subview: its buffer and start element per thread."""

    def __init__(self, mem, start, shape):
        self.mem, self.start, self.shape = mem, start, shape


def mutate_fragments(mutate, a, b, c):
    """The mma fragments a [T, 8], b [T, 4], c [T, 4] (register order) as a
    fragment-layout mutation corrupts them (or unchanged)."""
    if mutate == "swap-b-rows":
        b = b[:, [2, 3, 0, 1]]
    elif mutate == "swap-a-rows":
        a = a[:, [0, 1, 4, 5, 2, 3, 6, 7]]
    elif mutate == "swap-b-pair":
        b = b[:, [1, 0, 3, 2]]
    elif mutate == "swap-c-rows":
        c = c[:, [2, 3, 0, 1]]
    return a, b, c


def record_shared_access(mem, flat, t, e, write, race_error):
    """Race bookkeeping of one shared-memory access: element `flat[i]` is
    accessed by thread `t[i]` in barrier epoch `e[i]` (arrays of one shape).
    Raises `race_error` when another thread wrote the element since the last
    barrier, or, for a write, read or wrote it; a reader is remembered as
    -2 ('several') once two distinct threads read an element in an epoch."""
    if write:
        if len(np.unique(flat)) != flat.size:
            raise race_error("shared-memory race: two threads write one "
                             "element in the same access")
        bad = ((mem.r_epoch[flat] == e) & (mem.r_thread[flat] != t)) | \
            ((mem.w_epoch[flat] == e) & (mem.w_thread[flat] != t))
        if bad.any():
            raise race_error("shared-memory race: write after another "
                             "thread's access with no barrier between")
        mem.w_epoch[flat] = e
        mem.w_thread[flat] = t
        return
    bad = (mem.w_epoch[flat] == e) & (mem.w_thread[flat] != t)
    if bad.any():
        raise race_error("shared-memory race: read of another "
                         "thread's write with no barrier between")
    same = (mem.r_epoch[flat] == e) & (mem.r_thread[flat] != t)
    # Several lanes may read one element in this access: any two distinct
    # readers make it 'several'.
    f1, t1 = flat.ravel(), t.ravel()
    order = np.argsort(f1, kind="stable")
    fs, ts = f1[order], t1[order]
    multi = np.zeros(mem.r_thread.size, bool)
    dup = (fs[1:] == fs[:-1]) & (ts[1:] != ts[:-1])
    multi[fs[1:][dup]] = True
    mem.r_thread[flat] = np.where(same | multi[flat], -2, t)
    mem.r_epoch[flat] = e


def run_cases(cases, run_one, errors, mutate):
    """Runs `run_one(case) -> (ok, message)` for every case, printing PASS or
    FAIL with the case's name (case[0]) and message (an exception of
    `errors` fails the case with its text), then the summary line that the
    lit tests check; returns the exit status."""
    passed = failed = 0
    for case in cases:
        try:
            ok, msg = run_one(case)
        except errors as e:
            ok, msg = False, f"{type(e).__name__}: {e}"
        print(f"{'PASS' if ok else 'FAIL'} {case[0]}: {msg}", flush=True)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed (mutation: {mutate or 'none'})")
    return 0 if failed == 0 else 1


class RaceError(AssertionError):
    pass


MUTATIONS = ["swap-b-rows", "swap-a-rows", "swap-b-pair", "swap-c-rows",
             "drop-barriers", "drop-leading-barrier", "drop-load-masks",
             "drop-store-masks", "drop-async-wait", "drop-async-commit",
             "async-wait-one-more",
             "async-copy-wrong-stage", "drop-zero-fill",
             "flip-ldmatrix-trans", "drop-wgmma-wait", "drop-wgmma-fence",
             "drop-proxy-fence", "wgmma-swap-descriptor-offsets",
             "wgmma-swap-d-rows", "wgmma-wait-one-more",
             "drop-mbarrier-wait", "tma-wrong-box-coordinate",
             "tma-expect-tx-short", "tma-no-oob-fill"]


def ldmatrix_receivers(num_tiles, transpose):
    """For every element (matrix i, row r, column c) of an ldmatrix, the
    lane that receives it and where: arrays [tiles, 8, 8] of lane and pair
    element index (register i of that lane, element 0 or 1)."""
    r, c = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    if transpose:  # lane l gets [2 (l % 4) + e][l / 4]
        lane, elem = c * 4 + r // 2, r % 2
    else:  # lane l gets [l / 4][2 (l % 4) + e]
        lane, elem = r * 4 + c // 2, c % 2
    return (np.broadcast_to(lane, (num_tiles, 8, 8)),
            np.broadcast_to(elem, (num_tiles, 8, 8)))


def check_ldmatrix_model():
    """Every lane receives each matrix's elements once, as the PTX ISA's
    fragment of ldmatrix (the row/column pair per register)."""
    for trans in (False, True):
        lane, elem = ldmatrix_receivers(1, trans)
        seen = np.zeros((32, 2), int)
        np.add.at(seen, (lane[0].ravel(), elem[0].ravel()), 1)
        assert (seen == 1).all()


check_ldmatrix_model()


class Emulator:
    def __init__(self, mutate=None):
        self.mutate = mutate
        self.mma_count = 0
        self.epoch = 0
        self.ldmatrix_count = 0
        self.async_copy_count = 0
        self.wgmma_count = 0
        self.wgmma_macs = 0
        self.tma_count = 0  # TMA loads issued
        self.clock = 0  # ops executed: orders register writes and fences
        self.reset_async(0)

    def reset_async(self, threads):
        # Copies issued and not landed: dicts of mem, flat [n, w], vals,
        # lanes [n] and group [n] (-1: not committed yet).
        self.pending = []
        self.commits = np.zeros(threads, int)
        # wgmma of the block: in-flight records (dicts of group, reads, done),
        # groups committed, the clock of the last wgmma.fence; the block's
        # shared memory, placed from a 16-byte (not more) aligned address.
        self.wg_pending = []
        self.wg_commits = 0
        self.wg_fence = -1
        self.shared = []
        self.smem_next = 0x410
        self.mbarriers = []  # the block's nvgpu.mbarrier.create groups

    # Values -----------------------------------------------------------------
    def lanes(self, v):
        if isinstance(v, np.ndarray) and v.ndim >= 1 and \
                v.shape[0] == self.threads and not isinstance(v, Memory):
            return v
        return np.full(self.threads, v) if not isinstance(v, np.ndarray) \
            else np.broadcast_to(v, (self.threads,) + v.shape).copy()

    def get(self, env, name):
        v = env[name]
        if isinstance(v, (Memory, list, TensorMap, MBarriers, SharedView)):
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
        m = re.search(r"value = (-?[\d.]+(?:e[+-]?\d+)?) : (b?f16)", t)
        if m:
            assert float(m.group(1)) == 0.0, t
            return dtype_of(m.group(2))(0)
        m = re.search(r"value = dense<([-\d.e+]+)> : (vector<[^>]+>)", t)
        if m:
            dims, elem = vector_shape(m.group(2))
            assert float(m.group(1)) == 0.0, t
            return np.zeros(dims, dtype_of(elem))
        raise NotImplementedError(t)

    # Host ---------------------------------------------------------------------
    def run_func(self, func, inputs):
        """Runs `func` on numpy arrays (tensor or memref arguments; bf16 as
        uint16 bits); memref arguments are updated in place. Returns the
        Memory of the tensor the function returns (to_tensor), if any."""
        argnames, body = func.regions[0]
        env = {}
        self.args = []
        for name, arr in zip(argnames, inputs):
            mem = Memory(arr, ELEM_OF_DTYPE[arr.dtype.type])
            self.args.append(mem)
            env[name] = mem
        result = None
        for op in body:
            n = op.name
            if n == "arith.constant":
                env[op.results[0]] = self.constant(op)
            elif n == "bufferization.to_buffer":
                mem = env[op.operands[0]]
                shape, _, _ = memref_type(op.text.rsplit("->", 1)[1])
                assert list(mem.a.shape) == shape
                env[op.results[0]] = mem
            elif n in ("memref.collapse_shape", "memref.expand_shape",
                       "memref.subview", "memref.transpose"):
                # Static views: the result type's layout says where its
                # elements are in the allocation.
                mem = env[op.operands[0]]
                ty = op.text.rsplit("->", 1)[1]
                shape, _, _ = memref_type(ty)
                strides, off = memref_layout(ty, shape)
                env[op.results[0]] = mem.view(shape, strides, off)
            elif n == "memref.alloc":
                shape, elem, _ = memref_type(op.text)
                fill = 0xFFFF if elem == "bf16" else np.nan
                env[op.results[0]] = Memory(
                    np.full(shape, fill, dtype_of(elem)), elem)
            elif n == "memref.cast":
                # To the unranked memref the tensor map is made from: the
                # same view (its descriptor is what the encode call reads).
                env[op.results[0]] = env[op.operands[0]]
            elif n == "nvgpu.tma.create.descriptor":
                env[op.results[0]] = self.tensor_map(op, env)
            elif n == "gpu.launch":
                self.launch(op, env)
            elif n == "bufferization.to_tensor":
                result = env[op.operands[0]]
            elif n in ("func.return", "memref.dealloc"):
                pass
            else:
                raise NotImplementedError(f"host op {n}")
        return result

    def launch(self, op, env):
        sizes = [int(env[v]) for v in op.operands[:6]]
        grid, block = sizes[:3], sizes[3:]
        assert block[1] == block[2] == 1, block
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
                    # Shared memory and cp.async state are per block.
                    self.reset_async(self.threads)
                    lenv[args[4]] = np.int64(0)
                    lenv[args[5]] = np.int64(0)
                    for i in range(6):
                        lenv[args[6 + i]] = np.int64(sizes[i])
                    self.run_ops(body, lenv, np.ones(self.threads, bool))
                    for group in self.mbarriers:
                        if not group.idle():
                            raise RaceError("a thread block ends with TMA "
                                            "loads in flight")

    # Device -------------------------------------------------------------------
    def run_ops(self, ops, env, mask, loop_body=False):
        leading = loop_body
        for op in ops:
            n = op.name
            self.clock += 1
            if n == "scf.for":
                results = self.scf_for(op, env, mask)
                for i, v in enumerate(results):
                    env[f"{op.results[0].split('#')[0]}#{i}"] = v
                if len(op.results) == 1:
                    env[op.results[0]] = results[0]
                continue
            if n == "scf.if":
                cond = self.get(env, op.operands[0])
                if self.mutate == "drop-store-masks" and \
                        self.stores_global(op.regions[0][1], env):
                    cond = np.ones(self.threads, bool)
                if not op.results:
                    self.run_ops(op.regions[0][1], dict(env), mask & cond)
                    if len(op.regions) > 1:
                        self.run_ops(op.regions[1][1], dict(env),
                                     mask & ~cond)
                    continue
                # Results (the cp.async group tokens of a guarded prefetch):
                # both branches run under their masks, merged per thread.
                rt = self.run_ops(op.regions[0][1], dict(env), mask & cond)
                re_ = self.run_ops(op.regions[1][1], dict(env), mask & ~cond)
                for i, name in enumerate(op.results):
                    a, b = self.lanes(rt[i]), self.lanes(re_[i])
                    c = cond.reshape(cond.shape + (1,) * (a.ndim - 1))
                    env[name] = np.where(c, a, b)
                continue
            if n == "scf.yield":
                return [self.get(env, x) for x in op.operands]
            if n == "gpu.terminator":
                return None
            if n == "gpu.barrier":
                assert mask.all(), "barrier under divergent control flow"
                # drop-leading-barrier: the first barrier of a loop body
                # (the one that ends the previous step's reads).
                dropped = self.mutate == "drop-barriers" or (
                    self.mutate == "drop-leading-barrier" and leading)
                leading = False
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

    def stores_global(self, ops, env):
        """Whether `ops` store to a buffer outside shared memory."""
        for op in ops:
            if op.name in ("vector.store", "memref.store"):
                mem = env.get(op.operands[1])
                if isinstance(mem, Memory) and not mem.shared:
                    return True
        return False

    def eval(self, op, env, mask):
        n = op.name
        if n == "arith.constant":
            return self.constant(op)
        if n == "memref.alloca":
            shape, elem, space = memref_type(op.text)
            assert space == "workgroup", op.text
            fill = 0xFFFF if elem == "bf16" else np.nan
            mem = Memory(np.full(shape, fill, dtype_of(elem)), elem,
                         shared=True)
            # At the next 16-byte boundary, or the alloca's alignment.
            align = max(16, op.alignment() or 16)
            mem.addr = (self.smem_next + align - 1) // align * align
            self.smem_next = (mem.addr + mem.a.nbytes + 15) // 16 * 16
            self.shared.append(mem)
            return mem
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
            if self.mutate == "drop-load-masks":
                return o[0]
            return np.minimum(o[0], o[1])
        if n == "arith.index_cast":
            return o[0].astype(np.int64)
        if n == "arith.andi":
            return o[0] & o[1]
        if n == "arith.ori":
            return o[0] | o[1]
        if n == "arith.shrui":
            assert (o[0] >= 0).all() and (o[1] >= 0).all()
            return o[0] >> o[1]
        if n == "memref.extract_aligned_pointer_as_index":
            mem = o[0]
            assert isinstance(mem, Memory) and mem.shared, \
                "only shared-memory addresses are modelled"
            return np.full(self.threads, mem.addr, np.int64)
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
            if self.mutate == "drop-load-masks":
                return o[1]
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
        if n == "arith.extf":
            source = re.search(r"\((?:vector<[\dx]+x)?(\w+)>?\) ->",
                               op.text).group(1)
            if source == "bf16":
                return bf16_bits_to_f64(o[0]).astype(np.float32)
            return o[0].astype(np.float32)
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
        if n == "vector.broadcast":
            dims, _ = vector_shape(op.text.rsplit("->", 1)[1].strip())
            return np.broadcast_to(o[0].reshape((self.threads,) + (1,) * len(dims)),
                                   (self.threads,) + tuple(dims)).copy()
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
            assert (o[2] == LANES).all(), "shuffle width must be the warp"
            assert self.threads % LANES == 0, "shuffle in a partial warp"
            lane = np.arange(self.threads)
            src = (lane // LANES) * LANES + ((lane % LANES) ^ o[1])
            return (o[0][src], np.ones(self.threads, bool))
        if n == "nvgpu.mma.sync":
            assert "mmaShape = [16, 8, 16]" in op.text, op.text
            assert mask.all(), "mma.sync under divergent control flow"
            return self.nvgpu_mma(o[0], o[1], o[2])
        if n == "nvvm.mma.sync":
            assert mask.all(), "mma.sync under divergent control flow"
            return self.nvvm_mma(op, o)
        if n == "llvm.extractvalue":
            self.check_wgmma_regs(o[0], op)
            return o[0][op_ints(op, "position")[0]]
        if n == "llvm.mlir.poison":
            count = op.text.rsplit("->", 1)[1].count("f32")
            return Regs([np.zeros(self.threads, np.float32)] * count,
                        written=self.clock)
        if n == "llvm.insertvalue":
            self.check_wgmma_regs(o[0], op)
            regs = Regs(o[0], written=self.clock)
            v = np.asarray(o[1])
            regs[op_ints(op, "position")[0]] = np.where(mask, v, np.asarray(
                o[0][op_ints(op, "position")[0]]))
            return regs
        if n == "nvvm.wgmma.fence.aligned":
            self.check_warpgroups(mask, op)
            if self.mutate != "drop-wgmma-fence":
                self.wg_fence = self.clock
            return None
        if n == "nvvm.fence.proxy":
            assert "proxy_kind<async.shared>" in op.text, op.text
            if self.mutate != "drop-proxy-fence":
                lanes = np.nonzero(mask)[0]
                for mem in self.shared:
                    mem.unfenced[np.isin(mem.unfenced, lanes)] = -1
            return None
        if n == "nvvm.wgmma.mma_async":
            return self.wgmma(op, o, mask)
        if n == "nvvm.wgmma.commit.group.sync.aligned":
            self.check_warpgroups(mask, op)
            for rec in self.wg_pending:
                if rec["group"] < 0:
                    rec["group"] = self.wg_commits
            self.wg_commits += 1
            return None
        if n == "nvvm.wgmma.wait.group.sync.aligned":
            self.check_warpgroups(mask, op)
            allowed = int(re.search(r"group = (\d+) : i64", op.text).group(1))
            if self.mutate == "wgmma-wait-one-more":
                allowed += 1
            if self.mutate != "drop-wgmma-wait":
                self.wgmma_wait(allowed)
            return None
        if n == "nvgpu.ldmatrix":
            return self.ldmatrix(op, o[0], o[1:], mask)
        if n == "memref.subview" and isinstance(o[0], Memory) and o[0].shared:
            return self.shared_subview(op, o)
        if n == "nvgpu.mbarrier.create":
            count = int(re.search(r"num_barriers = (\d+)", op.text).group(1))
            group = MBarriers(count)
            self.mbarriers.append(group)
            return group
        if n == "nvgpu.mbarrier.init":
            group, count, idx = o[0], o[1][mask], o[2][mask]
            for c, i in zip(count, idx):
                group.init(int(i), int(c))
            return None
        if n == "nvgpu.mbarrier.arrive.expect_tx":
            group, tx, idx = o[0], o[1][mask], o[2][mask]
            for t, i in zip(tx, idx):
                t = int(t) // 2 if self.mutate == "tma-expect-tx-short" \
                    else int(t)
                group.arrive_expect_tx(int(i), t, 1)
            return None
        if n == "nvgpu.mbarrier.try_wait.parity":
            group, parity, idx = o[0], o[1][mask], o[3][mask]
            if not ((parity == parity[0]).all() and (idx == idx[0]).all()):
                raise AssertionError("divergent mbarrier wait")
            if self.mutate != "drop-mbarrier-wait":
                group.wait_parity(int(idx[0]), int(bool(parity[0])))
            return None
        if n == "nvgpu.tma.async.load":
            return self.tma_load(op, o, mask)
        if n == "nvgpu.device_async_copy":
            return self.async_copy(op, o, mask)
        if n == "nvgpu.device_async_create_group":
            self.commit_group(mask)
            return np.zeros(self.threads, np.int64)
        if n == "nvgpu.device_async_wait":
            m = re.search(r"numGroups = (\d+) : i32", op.text)
            self.wait_group(int(m.group(1)) if m else 0, mask)
            return None
        raise NotImplementedError(f"device op {n}")

    # sm_90a TMA (tma_model.py) -------------------------------------------------
    def tensor_map(self, op, env):
        """nvgpu.tma.create.descriptor: the tensor map the runtime encodes
        from the memref's descriptor and the box (TensorMap checks what the
        driver would)."""
        mem = env[op.operands[0]]
        box = [int(env[x]) for x in op.operands[1:]]
        res = op.text.rsplit("->", 1)[1]
        opts = dict(re.findall(r"(swizzle|l2promo|oob|interleave) = (\w+)",
                               res))
        return TensorMap(mem.base, mem.elem, mem.off, list(mem.a.shape),
                         mem.strides, box, swizzle=opts["swizzle"],
                         interleave=opts["interleave"], oob=opts["oob"],
                         owner=mem)

    def shared_subview(self, op, o):
        """A subview of shared memory (a TMA destination): the element
        offset of its start per thread."""
        mem = o[0]
        dyn = iter(o[1:])
        offs = op_ints(op, "static_offsets")
        start = np.zeros(self.threads, np.int64)
        for d, v in enumerate(offs):
            v = next(dyn) if v == -9223372036854775808 else v
            start = start + np.asarray(v, np.int64) * mem.strides[d]
        shape, _, _ = memref_type(op.text.rsplit("->", 1)[1])
        return SharedView(mem, mem.off + start, shape)

    def tma_load(self, op, o, mask):
        """cp.async.bulk.tensor global -> shared, completing on an
        mbarrier (tma_model.py): issued by every active thread."""
        seg = op_ints(op, "operandSegmentSizes")
        dst, group, tmap = o[0], o[1], o[2]
        coords = o[3:3 + seg[3]]
        idx = o[3 + seg[3]]
        assert seg[5] == 0 and seg[6] == 0, "multicast / predicate"
        assert isinstance(dst, SharedView) and isinstance(tmap, TensorMap)
        mem = dst.mem
        assert mem.elem == tmap.elem, "TMA element type"
        for t in np.nonzero(mask)[0]:
            c = [int(x[t]) for x in coords]
            if self.mutate == "tma-wrong-box-coordinate":
                c[1] += 8
            start = int(dst.start[t])
            if (mem.addr + start * mem.a.itemsize) % 128:
                raise TmaError("cp.async.bulk.tensor destination not "
                               "128-byte aligned")
            flat = start + np.arange(tmap.box_elems)
            if flat[-1] >= mem.base.size:
                raise AssertionError("TMA box past its shared buffer")
            # Issue: the destination is being written from now on.
            self.check_inflight(mem, flat, op)
            self.check_wgmma_sources(mem, flat, op)
            self.track(mem, flat[None, :], np.array([t]), write=True)
            mem.inflight[flat] += 1

            def land(mem=mem, flat=flat, c=c, tmap=tmap):
                mem.inflight[flat] -= 1
                mem.base[flat] = tmap.read_box(c, self.mutate)

            group.attach(int(idx[t]), tmap.box_bytes, land)
            self.tma_count += 1
        return None

    # sm_80 data movement ------------------------------------------------------
    def ldmatrix(self, op, mem, idx, mask):
        """ldmatrix.sync.aligned.m8n8.x{tiles}[.trans].shared.b16 for every
        warp: [T, tiles, 2] (register i of a lane is its pair of matrix i)."""
        tiles = int(re.search(r"numTiles = (\d+) : i32", op.text).group(1))
        trans = "transpose = true" in op.text
        if self.mutate == "flip-ldmatrix-trans":
            trans = not trans
        assert mem.shared, "ldmatrix reads shared memory"
        assert mem.a.itemsize == 2, "ldmatrix moves 16-bit elements"
        assert mask.all() and self.threads % LANES == 0, \
            "ldmatrix needs whole, converged warps"
        lane = np.arange(self.threads) % LANES
        used = lane < 8 * tiles  # lanes whose row address counts
        flat = self.offsets(op, mem, idx, 8, used)
        if ((flat * 2) % 16 != 0).any():
            raise AssertionError(f"ldmatrix row address not 16-byte "
                                 f"aligned: {op.text[:200]}")
        rows = np.zeros(self.threads, np.int64)
        rows[used] = flat
        warps = self.threads // LANES
        # Row r of matrix i of warp w starts at rows[w * 32 + 8 i + r].
        start = rows.reshape(warps, LANES)[:, :8 * tiles].reshape(
            warps, tiles, 8)
        elems = start[..., None] + np.arange(8)  # [warps, tiles, 8, 8]
        rlane, relem = ldmatrix_receivers(tiles, trans)
        self.check_inflight(mem, elems.reshape(-1), op)
        out = np.zeros((self.threads, tiles, 2), mem.a.dtype)
        w = np.arange(warps)[:, None, None, None]
        i = np.arange(tiles)[None, :, None, None]
        dest = w * LANES + rlane[None]
        out[dest, np.broadcast_to(i, dest.shape), relem[None]] = \
            mem.base[elems]
        self.track(mem, elems.reshape(-1, 1), dest.reshape(-1), write=False)
        self.ldmatrix_count += 1
        return out

    # sm_90a warpgroup MMA ---------------------------------------------------
    def check_warpgroups(self, mask, op):
        assert mask.all() and self.threads % WARPGROUP == 0, \
            f"{op.name} needs whole, converged warpgroups"

    def check_wgmma_regs(self, regs, op):
        rec = getattr(regs, "wgmma", None)
        if rec is not None and not rec["done"]:
            raise RaceError("wgmma accumulator registers accessed before a "
                            "wgmma.wait_group completed their group: "
                            f"{op.text[:120]}")

    def shared_at(self, addr, nbytes):
        """The shared buffer holding bytes [addr, addr + nbytes) of the
        shared window, and the element offset of addr in it."""
        for mem in self.shared:
            if mem.addr <= addr and addr + nbytes <= mem.addr + mem.a.nbytes:
                off = addr - mem.addr
                assert off % mem.a.itemsize == 0, "misaligned wgmma operand"
                return mem, off // mem.a.itemsize
        raise AssertionError(f"wgmma operand outside shared memory: "
                             f"{addr:#x}+{nbytes}")

    def wgmma_operand(self, desc, rows, elem, op):
        """Gathers a K-major rows x 16 operand: values (float64), and the
        (mem, flat) elements read."""
        assert (desc == desc[0]).all(), "wgmma descriptor not uniform"
        start, lbo, sbo = decode_wgmma_descriptor(desc[0], self.mutate)
        if start % 16:
            raise AssertionError("wgmma matrix start address not 16-byte "
                                 "aligned")
        offs = wgmma_kmajor_offsets(rows, lbo, sbo)
        addrs = start + offs
        lo, hi = int(addrs.min()), int(addrs.max()) + 2
        mem, first = self.shared_at(lo, hi - lo)
        assert mem.elem == elem, f"wgmma reads {elem} from {mem.elem}"
        flat = first + (addrs - lo) // 2
        self.check_inflight(mem, flat, op)
        if (mem.unfenced[flat.reshape(-1)] >= 0).any():
            raise RaceError("wgmma reads (async proxy) a shared-memory "
                            "write of the generic proxy no "
                            "fence.proxy.async ordered before it: "
                            f"{op.text[:120]}")
        # The async proxy reads on behalf of the whole warpgroup: an
        # element written since the last barrier by any thread races.
        f = flat.reshape(-1)
        record_shared_access(mem, f, np.full(f.shape, -3),
                             np.full(f.shape, self.epoch), False, RaceError)
        raw = mem.a.reshape(-1)[flat]
        vals = bf16_bits_to_f64(raw) if elem == "bf16" else \
            raw.astype(np.float64)
        return vals, (mem, f)

    def wgmma(self, op, o, mask):
        """wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}: reads A and
        B at issue, records them as in flight until the commit group
        holding this wgmma is waited for, and returns the accumulators
        (visible only then)."""
        self.check_warpgroups(mask, op)
        shape = re.search(r"shape = #nvvm.shape<m = (\d+), n = (\d+), "
                          r"k = (\d+)>", op.text)
        m, n, k = (int(v) for v in shape.groups())
        assert m == 64 and k == 16 and n % 8 == 0 and 8 <= n <= 256, op.text
        ty = re.search(r"typeA = #nvvm.wgmma_type<(\w+)>", op.text).group(1)
        assert ty in ("f16", "bf16") and \
            f"typeB = #nvvm.wgmma_type<{ty}>" in op.text and \
            "typeD = #nvvm.wgmma_type<f32>" in op.text, op.text
        # Both K-major (imm-trans-a/b 0), D = A B + D, no negation.
        assert "layoutA = #nvvm.mma_layout<row>" in op.text and \
            "layoutB = #nvvm.mma_layout<col>" in op.text, op.text
        assert "scaleD = #nvvm.wgmma_scale_out<one>" in op.text and \
            op.text.count("wgmma_scale_in<one>") == 2, op.text
        acc = o[0]
        assert len(acc) == n // 2, "accumulator struct of N / 2 registers"
        if acc.wgmma is None and not self.wg_fence > acc.written:
            raise RaceError("wgmma.mma_async on accumulator registers "
                            "written since the last wgmma.fence: "
                            f"{op.text[:120]}")
        if acc.wgmma is not None and acc.wgmma["n"] != n:
            raise AssertionError("chained wgmma of another shape needs a "
                                 "wgmma.fence")
        d = np.stack([np.asarray(r, np.float32) for r in acc], axis=1)
        out = np.zeros_like(d)
        reads = []
        for w0 in range(0, self.threads, WARPGROUP):
            s = slice(w0, w0 + WARPGROUP)
            a, ra = self.wgmma_operand(o[1][s], 64, ty, op)
            b, rb = self.wgmma_operand(o[2][s], n, ty, op)
            out[s] = wgmma_compute(a, b, d[s], self.mutate)
            reads += [ra, rb]
            self.wgmma_count += 1
            self.wgmma_macs += 64 * n * 16
        for mem, f in reads:
            np.add.at(mem.wgmma_reading, f, 1)
        rec = {"group": -1, "reads": reads, "done": False, "n": n}
        self.wg_pending.append(rec)
        return Regs([out[:, i] for i in range(n // 2)], wgmma=rec)

    def wgmma_wait(self, allowed):
        """wgmma.wait_group N: every committed group but the newest N
        completes (its accumulators become readable, its sources free)."""
        keep = []
        for rec in self.wg_pending:
            if 0 <= rec["group"] < self.wg_commits - allowed:
                rec["done"] = True
                for mem, f in rec["reads"]:
                    np.subtract.at(mem.wgmma_reading, f, 1)
            else:
                keep.append(rec)
        self.wg_pending = keep

    def check_wgmma_sources(self, mem, flat, op):
        if mem.shared and mem.wgmma_reading[np.asarray(flat).reshape(-1)].any():
            raise RaceError("shared-memory write to a source of an "
                            f"in-flight wgmma: {op.text[:120]}")

    def check_inflight(self, mem, flat, op):
        if mem.shared and mem.inflight[np.asarray(flat).reshape(-1)].any():
            raise RaceError("shared-memory race: access to an element a "
                            "cp.async or TMA load is still writing (not "
                            f"waited for): {op.text[:120]}")

    def async_copy(self, op, o, mask):
        seg = op_ints(op, "operandSegmentSizes")
        dst, didx = o[0], o[1:1 + seg[1]]
        src = o[1 + seg[1]]
        sidx = o[2 + seg[1]:2 + seg[1] + seg[3]]
        count = int(re.search(r"dstElements = (\d+) : index",
                              op.text).group(1))
        nbytes = count * dst.a.itemsize
        assert nbytes in (4, 8, 16), f"cp.async of {nbytes} bytes"
        if "bypassL1" in op.text:
            assert nbytes == 16, "cp.async.cg copies 16 bytes"
        assert dst.shared and not src.shared
        if seg[4]:
            n_src = o[2 + seg[1] + seg[3]].astype(np.int64)
        else:
            n_src = np.full(self.threads, count, np.int64)
        if self.mutate == "drop-zero-fill":
            n_src = np.full(self.threads, count, np.int64)
        assert ((n_src >= 0) & (n_src <= count)).all()
        if self.mutate == "async-copy-wrong-stage" and len(didx) >= 3:
            didx = [(didx[0] + 1) % dst.a.shape[0]] + list(didx[1:])
        dflat = self.offsets(op, dst, didx, count, mask)
        if ((dflat * dst.a.itemsize) % nbytes != 0).any():
            raise AssertionError(f"misaligned cp.async destination: "
                                 f"{op.text[:200]}")
        # The source: only srcElements are read (none for zero-fill only).
        reads = mask & (n_src > 0)
        sflat = np.zeros(self.threads, np.int64)
        if reads.any():
            f = self.offsets(op, src, sidx, 1, reads)
            ends = [np.asarray(i)[reads] for i in sidx]
            ends[-1] = ends[-1] + n_src[reads]
            if (ends[-1] > src.a.shape[-1]).any():
                raise AssertionError(f"out-of-bounds access: {op.text[:200]}")
            if ((f * src.a.itemsize) % nbytes != 0).any():
                raise AssertionError(f"misaligned cp.async source: "
                                     f"{op.text[:200]}")
            sflat[reads] = f
        lanes = np.nonzero(mask)[0]
        vals = np.zeros((lanes.size, count), dst.a.dtype)
        j = np.arange(count)[None, :]
        take = j < n_src[lanes][:, None]
        src_idx = np.where(take, sflat[lanes][:, None] + j, 0)
        vals[take] = src.base[src_idx][take]
        flat = dflat[:, None] + j
        # Issue: the destination is being written from now on.
        self.check_inflight(dst, flat, op)
        self.check_wgmma_sources(dst, flat, op)
        self.track(dst, flat, lanes, write=True)
        dst.inflight[flat.reshape(-1)] += 1
        self.pending.append({"mem": dst, "flat": flat, "vals": vals,
                             "lanes": lanes,
                             "group": np.full(lanes.size, -1)})
        self.async_copy_count += 1
        return np.zeros(self.threads, np.int64)

    def commit_group(self, mask):
        if self.mutate == "drop-async-commit":
            return
        for rec in self.pending:
            new = (rec["group"] < 0) & mask[rec["lanes"]]
            rec["group"][new] = self.commits[rec["lanes"][new]]
        self.commits[mask] += 1

    def wait_group(self, allowed, mask):
        if self.mutate == "drop-async-wait":
            return
        if self.mutate == "async-wait-one-more":
            allowed += 1
        keep = []
        for rec in self.pending:
            lanes, group = rec["lanes"], rec["group"]
            done = mask[lanes] & (group >= 0) & \
                (group < self.commits[lanes] - allowed)
            if done.any():
                mem, flat = rec["mem"], rec["flat"][done]
                mem.inflight[flat.reshape(-1)] -= 1
                mem.base[flat] = rec["vals"][done]
                self.track(mem, flat, lanes[done], write=True)
                mem.unfenced[flat] = lanes[done][:, None]
            if not done.all():
                keep.append({k: (v[~done] if isinstance(v, np.ndarray)
                                 else v) for k, v in rec.items()})
        self.pending = keep

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
            carried = self.run_ops(body, lenv, mask, loop_body=True)
        return carried

    # Memory -------------------------------------------------------------------
    def offsets(self, op, mem, idx, width, mask):
        shape = mem.a.shape
        idx = [i[mask] for i in idx]
        for d, i in enumerate(idx):
            hi = shape[d] - (width if d == len(shape) - 1 else 1)
            if ((i < 0) | (i > hi)).any():
                raise AssertionError(f"out-of-bounds access: {op.text[:200]}")
        assert mem.strides[-1] == 1, "accesses run along the last dimension"
        flat = mem.off + sum(i * st for i, st in zip(idx, mem.strides))
        flat = np.broadcast_to(flat, idx[0].shape if idx else ())
        m = re.search(r"alignment = (\d+) : i64", op.text)
        if m and ((flat * mem.a.itemsize) % int(m.group(1)) != 0).any():
            raise AssertionError(f"misaligned access: {op.text[:200]}")
        return flat

    def track(self, mem, flat, threads, write):
        for w in range(flat.shape[1]):
            f = flat[:, w]
            record_shared_access(mem, f, threads,
                                 np.full(f.shape, self.epoch), write,
                                 RaceError)

    def load(self, op, mem, idx, mask, scalar=False):
        width = 1 if scalar else vector_shape(op.text.rsplit("->", 1)[1].strip())[0][0]
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        vals = np.zeros((self.threads, width), mem.a.dtype)
        if mem.shared:
            self.check_inflight(mem, flat, op)
        vals[mask] = mem.base[flat]
        if mem.shared:
            self.track(mem, flat, np.nonzero(mask)[0], write=False)
        return vals[:, 0] if scalar else vals

    def store(self, op, val, mem, idx, mask, vector):
        width = val.shape[1] if vector else 1
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        v = val.reshape(self.threads, width)[mask]
        if mem.shared:
            self.check_inflight(mem, flat, op)
            self.check_wgmma_sources(mem, flat, op)
            self.track(mem, flat, np.nonzero(mask)[0], write=True)
            mem.unfenced[flat] = np.nonzero(mask)[0][:, None]
        mem.base[flat] = v
        np.add.at(mem.wbase, flat.reshape(-1), 1)

    # mma.sync -----------------------------------------------------------------
    def per_warp(self, a, b, c):
        """a [T, 8], b [T, 4] float64 and c [T, 4] f32 fragments in register
        order -> d [T, 4]: one m16n8k16 per warp."""
        a, b, c = mutate_fragments(self.mutate, a, b, c)
        assert self.threads % LANES == 0, "mma.sync in a partial warp"
        d = np.zeros((self.threads, 4), np.float32)
        for w in range(self.threads // LANES):
            s = slice(w * LANES, (w + 1) * LANES)
            d[s] = warp_mma(a[s], b[s], c[s])
            self.mma_count += 1
        return d

    def nvgpu_mma(self, a, b, c):
        t = self.threads
        assert a.shape == (t, 4, 2) and a.dtype == np.float16
        assert b.shape == (t, 2, 2) and b.dtype == np.float16
        assert c.shape == (t, 2, 2) and c.dtype == np.float32
        d = self.per_warp(a.reshape(t, 8).astype(np.float64),
                          b.reshape(t, 4).astype(np.float64), c.reshape(t, 4))
        return d.reshape(t, 2, 2)

    def nvvm_mma(self, op, o):
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


