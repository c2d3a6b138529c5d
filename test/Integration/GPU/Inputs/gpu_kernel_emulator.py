#!/usr/bin/env python3
"""An interpreter for the GPU kernels attnc's tensor-core passes emit.

Used by mma_fragment_emulator.py (attn-gpu-mma-matmul),
flash_mma_emulator.py (attn-gpu-flash-attention) and cache_write_emulator.py
(attn-gpu-cache-write). A thin layer over the emulator core it shares with
gpu_model_emulator.py (the gpuemu package: the parser, the ISA models below,
race bookkeeping and the device ops both model alike). It parses MLIR's
generic op form and runs a function: its host ops, then each gpu.launch
for every thread block, all threads of a block in lockstep (each SSA value
holds one value per thread). So every index computation, load, store, fragment
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
host, nvgpu.tma.async.load, nvgpu.mbarrier.*) follows gpuemu/tma.py's PTX
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

from gpuemu.core import (
    UNHANDLED, DeviceCore, init_shared_state, make_tensor_map)
from gpuemu.ir import (
    DYNAMIC, parse_memref, props, result_types, row_major, vector_dims)
from gpuemu.numerics import (
    LANES, WARPGROUP, bf16_bits_to_f64, f32_to_bf16_bits)
from gpuemu.tma import TensorMap


def dtype_of(elem):
    return {"f16": np.float16, "f32": np.float32, "bf16": np.uint16,
            "i32": np.int32, "i64": np.int64, "i1": np.bool_,
            "index": np.int64}[elem]


ELEM_OF_DTYPE = {np.float16: "f16", np.float32: "f32", np.uint16: "bf16",
                 np.int32: "i32", np.int64: "i64"}


class Memory:
    """A buffer plus, for shared memory, the race-detection state. Accesses
    address the allocation's elements (`flat`, write counts `wbase`) at
    `off` + sum(index * `strides`): a strided view (memref.subview,
    memref.transpose, ...) shares them with the memory it views."""

    def __init__(self, array, elem, shared=False, writes=None):
        self.a = array
        self.elem = elem
        self.shared = shared
        self.writes = np.zeros(array.shape, int) if writes is None else writes
        assert array.flags.c_contiguous and self.writes.flags.c_contiguous
        self.flat = array.reshape(-1)
        self.wbase = self.writes.reshape(-1)
        self.off = 0
        self.strides = row_major(array.shape)
        if shared:
            init_shared_state(self, array.size)

    # The view interface of gpuemu.core: a Memory is its own allocation.
    buf = property(lambda self: self)
    offset = property(lambda self: self.off)
    shape = property(lambda self: self.a.shape)
    itemsize = property(lambda self: self.a.itemsize)

    def view(self, shape, strides, off):
        """The view of this memory's allocation with `shape`, element
        `strides` and offset `off` (those of a view op's result type),
        sharing data and counts."""
        assert not self.shared
        view = object.__new__(Memory)
        view.elem, view.shared = self.elem, False
        view.flat, view.wbase, view.off = self.flat, self.wbase, off
        view.strides = list(strides)
        last = off + sum((d - 1) * st for d, st in zip(shape, strides))
        assert 0 <= off and (0 in shape or last < self.flat.size), \
            "view outside its allocation"
        view.a, view.writes = (
            np.lib.stride_tricks.as_strided(
                b[off:], shape, [st * b.itemsize for st in strides])
            for b in (self.flat, self.wbase))
        return view


class SharedView:
    """A shared-memory subview (a TMA destination): its allocation and
    start element per thread."""

    def __init__(self, buf, offset, shape):
        self.buf, self.offset, self.shape = buf, offset, shape


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


class Emulator(DeviceCore):
    """One block at a time: N is the block's threads, all of block 0."""
    Error = AssertionError
    SNIPPET = 200

    def __init__(self, mutate=None):
        self.mutate = mutate
        self.init_counters()
        self.start_block(0)

    def start_block(self, threads):
        self.threads = self.N = threads
        self.block_of = np.zeros(threads, np.int64)
        self.block_epoch = np.zeros(1, np.int64)
        self.reset_blocks()

    # Values -----------------------------------------------------------------
    def lanes(self, v):
        if isinstance(v, np.ndarray) and v.ndim >= 1 and \
                v.shape[0] == self.threads and not isinstance(v, Memory):
            return v
        return np.full(self.threads, v) if not isinstance(v, np.ndarray) \
            else np.broadcast_to(v, (self.threads,) + v.shape).copy()

    def get(self, env, name):
        v = env[name]
        if isinstance(v, (Memory, list, TensorMap, SharedView)):
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
            dims, elem = vector_dims(m.group(2))
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
                shape = parse_memref(result_types(op)[0])[0]
                assert list(mem.a.shape) == shape
                env[op.results[0]] = mem
            elif n in ("memref.collapse_shape", "memref.expand_shape",
                       "memref.subview", "memref.transpose"):
                # Static views: the result type's layout says where its
                # elements are in the allocation.
                mem = env[op.operands[0]]
                shape, _, strides, off, _ = parse_memref(result_types(op)[0])
                env[op.results[0]] = mem.view(
                    shape, row_major(shape) if strides is None else strides,
                    off or 0)
            elif n == "memref.alloc":
                shape, elem, _, _, _ = parse_memref(result_types(op)[0])
                fill = 0xFFFF if elem == "bf16" else np.nan
                env[op.results[0]] = Memory(
                    np.full(shape, fill, dtype_of(elem)), elem)
            elif n == "memref.cast":
                # To the unranked memref the tensor map is made from: the
                # same view (its descriptor is what the encode call reads).
                env[op.results[0]] = env[op.operands[0]]
            elif n == "nvgpu.tma.create.descriptor":
                mem = env[op.operands[0]]
                box = [int(env[x]) for x in op.operands[1:]]
                env[op.results[0]] = make_tensor_map(
                    op, mem.flat, mem.elem, mem.off, list(mem.a.shape),
                    mem.strides, box, owner=mem)
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
        args, body = op.regions[0]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    lenv = dict(env)
                    ids = [bx, by, bz]
                    for i in range(3):
                        lenv[args[i]] = np.int64(ids[i])
                    # Shared memory, barriers, cp.async, wgmma and mbarrier
                    # state are per block.
                    self.start_block(block[0])
                    lenv[args[3]] = np.arange(self.threads, dtype=np.int64)
                    lenv[args[4]] = np.int64(0)
                    lenv[args[5]] = np.int64(0)
                    for i in range(6):
                        lenv[args[6 + i]] = np.int64(sizes[i])
                    self.run_ops(body, lenv, np.ones(self.threads, bool))
                    self.check_tma_idle()

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
                    self.block_epoch[0] += 1
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
            shape, elem, _, _, space = parse_memref(result_types(op)[0])
            assert space == "workgroup", op.text
            fill = 0xFFFF if elem == "bf16" else np.nan
            mem = Memory(np.full(shape, fill, dtype_of(elem)), elem,
                         shared=True)
            self.place_shared(mem, mem.a.size, op.alignment())
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
            pos = tuple(props(op, "static_position"))
            r = o[1].copy()
            r[(slice(None),) + pos] = o[0]
            return r
        if n == "vector.extract":
            pos = tuple(props(op, "static_position"))
            return o[0][(slice(None),) + pos]
        if n == "vector.broadcast":
            dims, _ = vector_dims(result_types(op)[0])
            return np.broadcast_to(o[0].reshape((self.threads,) + (1,) * len(dims)),
                                   (self.threads,) + tuple(dims)).copy()
        if n == "vector.from_elements":
            dims, _ = vector_dims(result_types(op)[0])
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
        if n == "nvgpu.ldmatrix":
            out, _ = self.ldmatrix(op, o[0], o[1:], mask)
            self.ldmatrix_count += 1
            return out
        if n == "memref.subview" and isinstance(o[0], Memory) and o[0].shared:
            return self.shared_subview(op, o)
        if n == "nvgpu.device_async_copy":
            self.async_copy(op, o, mask)
            self.async_copy_count += 1
            return np.zeros(self.threads, np.int64)
        r = self.eval_core(op, o, mask)
        if r is not UNHANDLED:
            return r
        raise NotImplementedError(f"device op {n}")

    def shared_subview(self, op, o):
        """A subview of shared memory (a TMA destination): the element
        offset of its start per thread."""
        mem = o[0]
        dyn = iter(o[1:])
        offs = props(op, "static_offsets")
        start = np.zeros(self.threads, np.int64)
        for d, v in enumerate(offs):
            v = next(dyn) if v == DYNAMIC else v
            start = start + np.asarray(v, np.int64) * mem.strides[d]
        shape = parse_memref(result_types(op)[0])[0]
        return SharedView(mem, mem.off + start, shape)

    # What gpuemu.core asks of the emulator ----------------------------------
    def check_whole_warps(self, mask, what):
        assert mask.all() and self.threads % LANES == 0, \
            f"{what} needs whole, converged warps"

    def check_warpgroups(self, mask, op):
        assert mask.all() and self.threads % WARPGROUP == 0, \
            f"{op.name} needs whole, converged warpgroups"

    def register_values(self, raw, elem):
        return raw  # bf16 stays bits in registers

    def note_read(self, buf):
        pass

    def flat_index(self, op, mem, idx, mask, width):
        flat = self.offsets(op, mem, idx, width, mask)
        return flat[:, None] + np.arange(width)[None, :], mask

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

    def load(self, op, mem, idx, mask, scalar=False):
        width = 1 if scalar else \
            vector_dims(result_types(op)[0])[0][0]
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        vals = np.zeros((self.threads, width), mem.a.dtype)
        if mem.shared:
            self.check_inflight(mem, flat, op)
        vals[mask] = mem.flat[flat]
        if mem.shared:
            self.track(mem, flat, np.nonzero(mask)[0], write=False)
        return vals[:, 0] if scalar else vals

    def store(self, op, val, mem, idx, mask, vector):
        width = val.shape[1] if vector else 1
        flat = self.offsets(op, mem, idx, width, mask)
        flat = flat[:, None] + np.arange(width)[None, :]
        v = val.reshape(self.threads, width)[mask]
        if mem.shared:
            self.shared_write(mem, flat, np.nonzero(mask)[0], op)
        mem.flat[flat] = v
        np.add.at(mem.wbase, flat.reshape(-1), 1)

    # mma.sync -----------------------------------------------------------------
    def per_warp(self, a, b, c):
        """a [T, 8], b [T, 4] float64 and c [T, 4] f32 fragments in register
        order -> d [T, 4]: one m16n8k16 per warp."""
        assert self.threads % LANES == 0, "mma.sync in a partial warp"
        return self.mma(a, b, c)

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
