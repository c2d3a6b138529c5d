#!/usr/bin/env python3
"""Runs a whole compiled CUDA model on the host: every kernel, in launch order.

Input: a module at the end of attn-to-cuda's map stage
(`attn-opt --attn-to-cuda="stop-after=gpu-mapped ..." --mlir-print-op-generic`):
the model entry and its outlined layer functions on the host (gpu.alloc,
gpu.memcpy, gpu.dealloc, gpu.wait with async tokens, gpu.launch_func,
func.call, memref views) and the kernels in a gpu.module (gpu.func with
workgroup attributions). Nothing after that stage (NVVM lowering, PTX, ptxas)
is covered.

The host ops run in program order. On the device only async tokens order
gpu ops, so the emulator checks that program order is the only order that
matters: two async ops touching one device buffer (one writing it; a
gpu.dealloc counts as a write) must be ordered by their token dependencies
or by a blocking gpu.wait between them, and the entry must not return
before a blocking gpu.wait has seen every async op complete.
Each gpu.launch_func runs the kernel for every thread of every block: the
threads of many blocks at once, in lockstep, every SSA value holding one
value per thread (numpy vectors), under an activity mask for divergent
scf.if / scf.for. Blocks are independent, so running them side by side does
not change what a kernel computes; shared memory (workgroup attributions)
is private to each block, and barriers and the race check are per block
(gpu_kernel_emulator.py's rules: a thread reading an element another thread
of its block wrote since the block's last barrier, or writing one another
read or wrote since then, fails). Every memory access is bounds-checked
against its memref view (and the view against its allocation); device
buffers (gpu.alloc) and thread-private allocas start as NaN, so a read of
an element nobody wrote shows up in the output.

Values: f32 as float32, f16 as float16, bf16 as float32 holding
bf16-rounded values (memory holds bf16 as uint16 bits, rounded to nearest
even on store); every float op rounds its result to its MLIR result type.
Math functions (exp, tanh, rsqrt, ...) are evaluated in float64 and rounded,
not with libdevice's algorithms. mma.sync m16n8k16 is modelled from the PTX
ISA fragment layout (gpu_kernel_emulator.py's model, vectorized over warps).

Mutations (to show the comparison bites): skip-launch:K does not run the
K-th kernel launch (0-based, in launch order); drop-block:K does not run the
last thread block of the K-th launch; drop-barriers ignores every
gpu.barrier (the race check must then fail); swap-b-rows, swap-a-rows,
swap-c-rows corrupt the mma fragment layout (gpu_kernel_emulator.py).
ldmatrix and cp.async (nvgpu.ldmatrix, nvgpu.device_async_copy /
create_group / wait) follow gpu_kernel_emulator.py's PTX ISA model, with its
mutations drop-async-wait, drop-async-commit, async-wait-one-more,
async-copy-wrong-stage,
drop-zero-fill and flip-ldmatrix-trans. unguard-stores runs the stores that
a result-less scf.if guards (kernels' edge rows and columns) in every
thread. reset-state zeroes the model state
(KV caches) before every run instead of keeping it between runs. The sm_90a GEMMs' wgmma
(nvvm.wgmma.* with shared-memory descriptors, fence.proxy.async) follows
gpu_kernel_emulator.py's PTX ISA model and async rules, with its wgmma
mutations; every lane of the launch must execute the wgmma ops together.

The parser, the ISA models, the race bookkeeping and the device ops both
emulators model alike (cp.async, ldmatrix, mma.sync, wgmma, TMA and
mbarriers) are the emulator core's (the gpuemu package); this emulator adds
the host program, many blocks at once, per-lane loops and views, and
arithmetic on register values (bf16 as float32, where the kernel emulator
keeps bf16 bits).

THIS IS NOT A SUBSTITUTE FOR RUNNING ON A GPU (see gpu_kernel_emulator.py).
"""

import math
import re

import numpy as np

from gpuemu.core import (
    UNHANDLED, DeviceCore, EmulationError, make_tensor_map)
from gpuemu.host import (
    NP_OF, Buffer, View, bind_weight, contiguous, fill_value, from_f64,
    new_buffer, read_safetensors_raw)
from gpuemu.ir import (
    parse_memref, operand_types, props, result_types, row_major,
    scalar_elem, split_top, sym_name, vector_dims)
from gpuemu.memory import MemoryOps
from gpuemu.numerics import (
    LANES, WARPGROUP, bits_to_bf16_f32, f32_to_bf16_bits, round_to, to_f64)

MAX_LANES = 1 << 16


# ---------------------------------------------------------------------------
# The interpreter.

class Emulator(DeviceCore, MemoryOps):
    Error = EmulationError
    SNIPPET = 160

    def __init__(self, module, mutate=None, host_memory_visible=False):
        self.m = module
        self.mutate = mutate
        # A kernel that touches host memory (a memref.get_global of the host
        # module) fails unless this is set (as if the device could read
        # host memory: HMM / ATS systems).
        self.host_memory_visible = host_memory_visible
        self.on_device = False
        self.launches = 0
        self.kernel_names = []
        self.async_ops = []  # every async op issued: deps, buffers touched
        self.done = set()  # async ops a blocking gpu.wait has seen complete
        self.current = None  # the async op being executed
        # ldmatrix_count counts warps, async_copy_count threads.
        self.init_counters()
        self.states = {}  # model state buffers, kept between runs

    # -- entry --------------------------------------------------------------
    def run_model(self, weights_path, inputs):
        """Binds the manifest's buffers (weights from the file, `inputs` in
        order, or by name when a dict, outputs NaN-filled) and runs the
        entry. Returns the outputs (float64 for floats)."""
        tensors = read_safetensors_raw(weights_path)
        args, outputs = [], []
        named = isinstance(inputs, dict)
        ins = dict(inputs) if named else list(inputs)
        if self.mutate == "reset-state":  # the caches forget earlier runs
            self.states = {}
        # Dynamic sizes as the runtime derives them (prepareDynamicRun): each
        # `?` of an input is the caller's or must equal the earlier input
        # dimension dims_from names; outputs are sized from the inputs.
        in_shapes = []

        def run_shape(r, given=None):
            shape, k = [], 0
            for axis, d in enumerate(r["shape"]):
                if d is not None:
                    if given is not None and given[axis] != d:
                        raise EmulationError(
                            f"{r['name']}: shape {tuple(given)}, the "
                            f"model's is {r['shape']}")
                    shape.append(d)
                    continue
                src, src_axis = r["dims_from"][k]
                k += 1
                if src < 0:
                    shape.append(int(given[axis]))
                    continue
                want = in_shapes[src][src_axis]
                if given is not None and given[axis] != want:
                    raise EmulationError(
                        f"{r['name']}: dimension {axis} is {given[axis]}, "
                        f"input {src} dimension {src_axis} is {want}")
                shape.append(want)
            return shape

        for r in self.m.manifest:
            if r["kind"] == "weight":
                a = bind_weight(tensors, r)
                shape = r["shape"]
            elif r["kind"] == "input":
                x = np.asarray(ins.pop(r["name"]) if named else ins.pop(0))
                assert len(x.shape) == len(r["shape"]), (x.shape, r["shape"])
                shape = run_shape(r, list(x.shape))
                in_shapes.append(shape)
                a = from_f64(x, r["dtype"]) if r["dtype"] in (
                    "f32", "f16", "bf16") else x.astype(NP_OF[r["dtype"]])
            elif r["kind"] == "output":
                shape = run_shape(r)
                a = np.full(shape, fill_value(r["dtype"]), NP_OF[r["dtype"]])
            elif r["kind"] == "state":
                # Model state (KV caches): zeroed once, as the runtime does,
                # then updated in place by every run of this emulator.
                shape = r["shape"]
                if r["name"] not in self.states:
                    buf = Buffer(np.zeros(int(np.prod(shape)),
                                          NP_OF[r["dtype"]]),
                                 r["dtype"], "global", r["name"])
                    self.states[r["name"]] = View(buf, 0, shape,
                                                  row_major(shape))
                args.append(self.states[r["name"]])
                continue
            else:
                raise NotImplementedError(f"manifest record {r['kind']}")
            buf = Buffer(a.reshape(-1).copy(), r["dtype"], "global", r["name"])
            view = View(buf, 0, shape, row_major(shape))
            args.append(view)
            if r["kind"] == "output":
                outputs.append((view, r["dtype"]))
        assert not ins, "more inputs than the manifest has"
        self.call(self.m.funcs[self.m.entry], args)
        pending = [i for i in range(len(self.async_ops)) if i not in self.done]
        if pending:
            raise EmulationError(f"the entry returns with {len(pending)} "
                                 f"async ops not waited for")
        res = []
        for view, elem in outputs:
            a = view.array()
            res.append(to_f64(a, elem) if elem in ("f32", "f16", "bf16")
                       else a.copy())
        return res

    # -- host ---------------------------------------------------------------
    def call(self, func, args):
        argnames, body = func.regions[0]
        assert len(argnames) == len(args), (sym_name(func), len(args))
        env = dict(zip(argnames, args))
        self.N = 1
        for op in body:
            n = op.name
            o = op.operands
            if n == "gpu.wait":
                deps = [self.token(env, t) for t in o]
                if op.results:  # a new token after `deps`
                    env[op.results[0]] = self.issue(n, deps)
                else:  # the host blocks until `deps` are done
                    for d in deps:
                        self.done |= {d} | self.async_ops[d]["anc"]
                continue
            rec = None
            if n in ("gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset",
                     "gpu.launch_func"):
                ndeps = self.async_deps(op)
                deps = [self.token(env, t) for t in o[:ndeps]]
                if n == "gpu.launch_func" and \
                        self.mutate == f"drop-deps:{self.launches}":
                    deps = []
                o = o[ndeps:]
                rec = self.issue(n, deps)
                token = op.results[-1] if op.results and \
                    result_types(op)[-1] == "!gpu.async.token" else None
                if token:
                    env[token] = rec
                else:  # synchronous: the host waits for it (and its deps)
                    for d in deps:
                        self.done |= {d} | self.async_ops[d]["anc"]
                self.current = self.async_ops[rec]
            if n == "gpu.alloc":
                shape, elem, strides, _, _ = parse_memref(result_types(op)[0])
                sizes = iter(o)  # the dynamic sizes, in order
                shape = [int(env[next(sizes)]) if d is None else d
                         for d in shape]
                buf, _ = new_buffer(shape, elem, "global", name=op.results[0])
                env[op.results[0]] = View(buf, 0, shape, row_major(shape))
            elif n in ("gpu.dealloc",):
                self.current["writes"].add(id(env[o[0]].buf))
            elif n == "gpu.memcpy":
                dst, src = env[o[0]], env[o[1]]
                assert dst.shape == src.shape
                # The runtime (mgpuMemcpy) copies one contiguous byte range
                # from each view's first element: a strided view would be
                # scrambled on a GPU, so it is an error here too.
                for side, v in (("target", dst), ("source", src)):
                    if not contiguous(v.shape, v.strides):
                        raise EmulationError(
                            f"gpu.memcpy with a non-contiguous {side} "
                            f"(shape {v.shape}, strides {v.strides}): the "
                            "runtime copies one contiguous range")
                d = dst.array()
                d[...] = src.array()
                self.current["writes"].add(id(dst.buf))
                self.current["reads"].add(id(src.buf))
            elif n == "gpu.launch_func":
                self.launch(op, [env[x] for x in o], env)
            elif n == "func.call":
                callee = re.search(r"callee = @(\w+)", op.text).group(1)
                self.call(self.m.funcs[callee], [env[x] for x in o])
                self.N = 1
            elif n == "func.return":
                return
            elif n == "memref.copy":
                dst, src = env[o[1]], env[o[0]]
                dst.array()[...] = src.array()
            elif n == "memref.get_global":
                env[op.results[0]] = self.get_global(op)
            else:
                self.N = 1
                r = self.eval(op, env, np.ones(1, bool))
                self.bind(op, env, r)
            if rec is not None:
                self.check_ordering(rec)
                self.current = None
                if not (op.results and
                        result_types(op)[-1] == "!gpu.async.token"):
                    self.done.add(rec)
        raise EmulationError("function without func.return")

    # -- stream ordering ----------------------------------------------------
    # Async ops run in program order here; on the device only their token
    # dependencies order them. Two ops that touch one device buffer (one of
    # them writing it, a gpu.dealloc counting as a write) must be ordered:
    # one among the other's transitive dependencies, or completed (a
    # blocking gpu.wait) before the other was issued.
    def token(self, env, name):
        t = env[name]
        assert isinstance(t, int), f"{name} is not an async token"
        return t

    def issue(self, name, deps):
        anc = set()
        for d in deps:
            anc |= {d} | self.async_ops[d]["anc"]
        self.async_ops.append({"name": name, "anc": anc, "reads": set(),
                               "writes": set(), "kernel": None})
        return len(self.async_ops) - 1

    def check_ordering(self, x):
        X = self.async_ops[x]
        for y in range(x):
            if y in self.done or y in X["anc"]:
                continue
            Y = self.async_ops[y]
            if X["writes"] & (Y["reads"] | Y["writes"]) or \
                    X["reads"] & Y["writes"]:
                raise EmulationError(
                    f"{X['name']} {X['kernel'] or ''} and an earlier "
                    f"{Y['name']} {Y['kernel'] or ''} touch one buffer with "
                    f"no async dependency between them")

    def get_global(self, op):
        name = re.search(r"name = @([\w$.]+)", op.text).group(1)
        g = self.m.globals[name]
        assert " constant," in g.text, f"mutable global {name}"
        shape, elem, _, _, _ = parse_memref(
            re.search(r"type = (memref<[^>]*>)", g.text).group(1))
        m = re.search(r"initial_value = dense<(.*?)> : tensor<", g.text)
        lit = m.group(1)
        count = int(np.prod(shape, dtype=np.int64))
        if lit.startswith('"0x') and elem in NP_OF and elem != "i1":
            # MLIR prints large dense data as its little-endian bytes in hex
            # (one element's bytes for a splat).
            raw = np.frombuffer(bytes.fromhex(lit.strip('"')[2:]),
                                np.dtype(NP_OF[elem]).newbyteorder("<"))
            flat = np.resize(raw, count) if raw.size == 1 else raw
            assert flat.size == count, (name, flat.size, count)
            buf = Buffer(flat.astype(NP_OF[elem]), elem, "host", "@" + name)
            return View(buf, 0, shape, row_major(shape))
        if lit.startswith("["):
            vals = [self.scalar_literal(v.strip(), elem) for v in
                    lit.replace("[", "").replace("]", "").split(",")]
        else:
            vals = [self.scalar_literal(lit.strip('"'), elem)] * count
        if elem == "bf16":
            flat = f32_to_bf16_bits(np.array(vals, np.float32))
        else:
            flat = np.array(vals).astype(NP_OF[elem]).reshape(-1)
        buf = Buffer(flat, elem, "host", "@" + name)
        return View(buf, 0, shape, row_major(shape))

    def async_deps(self, op):
        if op.name in ("gpu.alloc", "gpu.launch_func"):
            return props(op, "operandSegmentSizes")[0]
        # gpu.dealloc / gpu.memcpy / gpu.memset: leading token operands
        types = operand_types(op)
        k = 0
        while k < len(types) and types[k] == "!gpu.async.token":
            k += 1
        return k

    # -- kernels ------------------------------------------------------------
    def launch(self, op, operands, env):
        seg = props(op, "operandSegmentSizes")
        vals = [int(v) for v in operands[:6]]
        grid, block = vals[:3], vals[3:6]
        assert seg[7] == seg[8] == seg[9] == 0, "clusters"
        assert seg[10] == 0, "dynamic shared memory"
        kargs = operands[6:6 + seg[11]]
        name = re.search(r"kernel = @([\w]+)::@([\w]+)", op.text)
        kname = f"{name.group(1)}::{name.group(2)}"
        kernel = self.m.kernels[kname]
        index = self.launches
        self.launches += 1
        self.kernel_names.append(kname)
        self.current["kernel"] = \
            "@" + kname.replace("::", "::@") + f" (launch {index})"
        if self.mutate == f"skip-launch:{index}":
            return
        T = block[0] * block[1] * block[2]
        nb = grid[0] * grid[1] * grid[2]
        if self.mutate == f"drop-block:{index}":
            nb -= 1
        chunk = max(1, min(nb, MAX_LANES // T))
        for b0 in range(0, nb, chunk):
            self.run_blocks(kernel, grid, block, b0, min(nb, b0 + chunk),
                            kargs)

    def run_blocks(self, kernel, grid, block, b0, b1, kargs):
        T = block[0] * block[1] * block[2]
        nblk = b1 - b0
        N = nblk * T
        self.N = N
        self.T = T
        lane = np.arange(N, dtype=np.int64)
        b = b0 + lane // T
        t = lane % T
        self.block_of = lane // T
        self.block_epoch = np.zeros(nblk, np.int64)
        self.reset_blocks()
        argnames, body = kernel.regions[0]
        nwg = int(re.search(r"workgroup_attributions = (\d+)",
                            kernel.text).group(1)) \
            if "workgroup_attributions" in kernel.text else 0
        nargs = len(argnames) - nwg
        assert len(kargs) == nargs, (sym_name(kernel), len(kargs), nargs)
        env = dict(zip(argnames[:nargs], kargs))
        # Workgroup attributions: one copy per block.
        wg_types = self.block_arg_types(kernel)[nargs:] if nwg else []
        m = re.search(r"workgroup_attrib_attrs = \[(.*?)\]", kernel.text)
        aligns = [int(a) for a in re.findall(r"llvm.align = (\d+)",
                                             m.group(1))] if m else []
        for i, (name, ty) in enumerate(zip(argnames[nargs:], wg_types)):
            shape, elem, _, _, space = parse_memref(ty)
            assert space == "workgroup"
            buf, size = new_buffer(shape, elem, "shared", copies=nblk)
            self.place_shared(buf, size, aligns[i] if i < len(aligns)
                              else None)
            env[name] = View(buf, (lane // T) * size, shape, row_major(shape))
        self.ids = {
            "thread_id": [t % block[0], (t // block[0]) % block[1],
                          t // (block[0] * block[1])],
            "block_id": [b % grid[0], (b // grid[0]) % grid[1],
                         b // (grid[0] * grid[1])],
            "block_dim": [np.int64(v) for v in block],
            "grid_dim": [np.int64(v) for v in grid],
        }
        self.on_device = True
        try:
            self.run_ops(body, env, np.ones(N, bool))
        finally:
            self.on_device = False
        self.check_tma_idle()

    def block_arg_types(self, kernel):
        line = kernel.block_header
        m = re.match(r"\^bb\d+\((.*)\):$", line)
        return [a.split(":", 1)[1].strip() for a in split_top(m.group(1))]

    # -- device -------------------------------------------------------------
    def lanes(self, v):
        v = np.asarray(v)
        if v.ndim >= 1 and v.shape[0] == self.N:
            return v
        return np.broadcast_to(v, (self.N,) + v.shape)

    def bind(self, op, env, r):
        if r is None:
            return
        if len(op.results) > 1:
            for name, v in zip(op.results, r):
                env[name] = v
        elif op.results:
            env[op.results[0]] = r

    def run_ops(self, ops, env, mask):
        for op in ops:
            n = op.name
            self.clock += 1
            if n == "scf.for":
                self.bind(op, env, self.scf_for(op, env, mask))
                continue
            if n == "scf.if":
                self.bind(op, env, self.scf_if(op, env, mask))
                continue
            if n == "scf.yield":
                return [env[x] for x in op.operands]
            if n in ("gpu.return", "gpu.terminator"):
                return None
            if n == "gpu.barrier":
                if self.mutate == "drop-barriers":
                    continue
                blk = np.unique(self.block_of[mask])
                part = np.zeros(len(self.block_epoch), bool)
                part[blk] = True
                if not (mask == part[self.block_of]).all():
                    raise EmulationError("barrier under divergent control "
                                         "flow within a block")
                self.block_epoch[blk] += 1
                continue
            self.bind(op, env, self.eval(op, env, mask))
        return None

    def scf_if(self, op, env, mask):
        cond = env[op.operands[0]]
        then_ops = op.regions[0][1]
        else_ops = op.regions[1][1] if len(op.regions) > 1 else []
        if np.ndim(cond) == 0:
            r = self.run_ops(then_ops if cond else else_ops, dict(env), mask)
            return r if op.results else None
        c = np.asarray(cond, bool)
        if self.mutate == "unguard-stores" and not op.results and \
                not else_ops and all(o.name in ("vector.store", "memref.store",
                                                "scf.yield")
                                     for o in then_ops):
            c = np.ones_like(c)  # the edge guards of kernel stores
        rt = self.run_ops(then_ops, dict(env), mask & c) if (mask & c).any() \
            else None
        re_ = self.run_ops(else_ops, dict(env), mask & ~c) \
            if else_ops and (mask & ~c).any() else None
        if not op.results:
            return None
        out = []
        for i in range(len(op.results)):
            a = rt[i] if rt is not None else re_[i]
            b = re_[i] if re_ is not None else a
            a, b = self.lanes(a), self.lanes(b)
            cc = c.reshape(c.shape + (1,) * (a.ndim - 1))
            out.append(np.where(cc, a, b))
        return out if len(out) > 1 else out[0]

    def scf_for(self, op, env, mask):
        lb, ub, step = (env[x] for x in op.operands[:3])
        carried = [env[x] for x in op.operands[3:]]
        args, body = op.regions[0]
        if np.ndim(lb) == np.ndim(ub) == np.ndim(step) == 0:
            for iv in range(int(lb), int(ub), int(step)):
                lenv = dict(env)
                lenv[args[0]] = np.int64(iv)
                lenv.update(zip(args[1:], carried))
                carried = self.run_ops(body, lenv, mask)
        else:
            iv = self.lanes(lb).astype(np.int64).copy()
            ub, step = self.lanes(ub), self.lanes(step)
            active = mask & (iv < ub)
            while active.any():
                lenv = dict(env)
                lenv[args[0]] = iv
                lenv.update(zip(args[1:], carried))
                new = self.run_ops(body, lenv, active)
                merged = []
                for old, nv in zip(carried, new):
                    nv = self.lanes(nv)
                    old = self.lanes(old)
                    a = active.reshape(active.shape + (1,) * (nv.ndim - 1))
                    merged.append(np.where(a, nv, old))
                carried = merged
                iv = iv + np.where(active, step, 0)
                active = active & (iv < ub)
        if not op.results:
            return None
        return carried if len(carried) > 1 else carried[0]

    def constant(self, op):
        t = op.text
        m = re.search(r"value = (.*) : ([\w<>x]+)\}>", t)
        if not m:
            m = re.search(r"value = (true|false)\}>", t)
            return np.bool_(m.group(1) == "true")
        lit, ty = m.group(1), m.group(2)
        if ty.startswith("vector<"):
            dims, elem = vector_dims(ty)
            d = re.fullmatch(r"dense<(.*)>", lit).group(1)
            if d.startswith("["):
                vals = [self.scalar_literal(x.strip(), elem)
                        for x in d.strip("[]").replace("[", "").replace(
                            "]", "").split(",")]
                a = np.array(vals).reshape(dims)
            else:
                a = np.full(dims, self.scalar_literal(d.strip('"'), elem))
            a = a.astype(self.value_dtype(elem))
            return np.broadcast_to(a, (self.N,) + a.shape).copy()
        return self.scalar_literal(lit, ty)

    def value_dtype(self, elem):
        return {"f32": np.float32, "bf16": np.float32, "f16": np.float16,
                "i1": np.bool_}.get(elem, np.int64)

    def scalar_literal(self, lit, elem):
        if lit in ("true", "false"):
            return np.bool_(lit == "true")
        if elem in ("f32", "f16", "bf16"):
            if lit.startswith("0x"):
                bits = int(lit, 16)
                if elem == "f32":
                    v = np.array([bits], np.uint32).view(np.float32)[0]
                elif elem == "f16":
                    v = np.array([bits], np.uint16).view(np.float16)[0]
                else:
                    v = bits_to_bf16_f32(np.array([bits], np.uint16))[0]
            else:
                v = float(lit)
            return round_to(np.float64(v), elem)[()]
        return np.int64(int(lit))

    def eval(self, op, env, mask):
        n = op.name
        if n == "arith.constant":
            return self.constant(op)
        if n in ("gpu.thread_id", "gpu.block_id", "gpu.block_dim",
                 "gpu.grid_dim"):
            dim = "xyz".index(re.search(r"#gpu<dim (\w)>", op.text).group(1))
            return self.ids[n[4:]][dim]
        if n == "gpu.lane_id":
            return np.arange(self.N, dtype=np.int64) % LANES
        if n == "memref.dim":
            view, axis = env[op.operands[0]], env[op.operands[1]]
            assert np.ndim(axis) == 0, "memref.dim of a per-lane axis"
            return np.asarray(view.shape[int(axis)], np.int64)
        if n == "memref.alloca":
            shape, elem, _, _, space = parse_memref(result_types(op)[0])
            assert None not in shape, "dynamic memref.alloca"
            if space == "workgroup":
                raise NotImplementedError("workgroup alloca")
            buf, size = new_buffer(shape, elem, "private", copies=self.N)
            return View(buf, np.arange(self.N, dtype=np.int64) * size, shape,
                        row_major(shape))
        if n == "memref.cast" and "memref<*x" in result_types(op)[0]:
            # To the unranked memref a tensor map is made from: the same
            # view (its descriptor is what the encode call reads).
            return env[op.operands[0]]
        if n == "nvgpu.tma.create.descriptor":
            return self.tensor_map(op, env)
        if n in ("memref.subview", "memref.expand_shape",
                 "memref.collapse_shape", "memref.cast",
                 "memref.reinterpret_cast", "memref.transpose"):
            return self.view_op(op, env, mask)
        o = [env[x] for x in op.operands]
        if n == "memref.load":
            return self.load(op, o[0], o[1:], mask, None)
        if n == "memref.store":
            self.store(op, o[0], o[1], o[2:], mask, None)
            return None
        if n == "vector.load":
            dims, _ = vector_dims(result_types(op)[0])
            assert len(dims) == 1, op.text
            return self.load(op, o[0], o[1:], mask, dims[0])
        if n == "vector.store":
            dims, _ = vector_dims(operand_types(op)[0])
            self.store(op, o[0], o[1], o[2:], mask, dims[0])
            return None
        if n == "memref.copy":
            self.copy(o[0], o[1], mask)
            return None
        if n.startswith("arith.") or n.startswith("math."):
            return self.arith(op, n, o)
        if n == "vector.to_elements":
            v = self.lanes(o[0]).reshape(self.N, -1)
            return [v[:, i] for i in range(v.shape[1])]
        if n == "vector.from_elements":
            dims, _ = vector_dims(result_types(op)[0])
            return np.stack([self.lanes(x) for x in o], axis=1).reshape(
                [self.N] + dims)
        if n == "vector.extract":
            assert len(o) == 1, "dynamic vector.extract position"
            pos = tuple(props(op, "static_position"))
            return self.lanes(o[0])[(slice(None),) + pos]
        if n == "vector.insert":
            assert len(o) == 2, "dynamic vector.insert position"
            pos = tuple(props(op, "static_position"))
            r = self.lanes(o[1]).copy()
            r[(slice(None),) + pos] = self.lanes(o[0])
            return r
        if n == "vector.broadcast":
            dims, _ = vector_dims(result_types(op)[0])
            src = self.lanes(o[0])
            src = src.reshape((self.N,) + (1,) * (len(dims) - src.ndim + 1)
                              + src.shape[1:])
            return np.broadcast_to(src, (self.N,) + tuple(dims)).copy()
        if n == "vector.shape_cast":
            dims, _ = vector_dims(result_types(op)[0])
            return self.lanes(o[0]).reshape([self.N] + dims)
        if n == "vector.bitcast":
            # vector<2xbf16|2xf16> -> vector<1xi32>: element 0 in the low
            # half (little endian), as LLVM's bitcast.
            src_elem = vector_dims(operand_types(op)[0])[1]
            dims, elem = vector_dims(result_types(op)[0])
            v = self.lanes(o[0])
            assert v.shape[1:] == (2,) and dims == [1] and elem == "i32", \
                op.text[:200]
            if src_elem == "bf16":
                bits = f32_to_bf16_bits(v.astype(np.float32))
            else:
                assert src_elem == "f16"
                bits = v.astype(np.float16).view(np.uint16)
            bits = bits.astype(np.int64)
            return (bits[:, 0] | (bits[:, 1] << 16)).reshape(self.N, 1)
        if n == "nvvm.mma.sync":
            assert "shape = #nvvm.shape<m = 16, n = 8, k = 16>" in op.text
            assert "layoutA = #nvvm.mma_layout<row>" in op.text and \
                "layoutB = #nvvm.mma_layout<col>" in op.text
            assert props(op, "operandSegmentSizes") == [4, 2, 4]
            assert self.T % LANES == 0, "mma.sync in a block of partial warps"
            self.check_warp_uniform(mask, "mma.sync")
            ty = re.search(r"multiplicandAPtxType = #nvvm.mma_type<(\w+)>",
                           op.text).group(1)
            assert ty in ("bf16", "f16"), ty

            def unpack(reg):  # .bf16x2 / .f16x2: element 0 in the low half
                reg = self.lanes(reg).astype(np.int64)
                lo, hi = reg & 0xFFFF, (reg >> 16) & 0xFFFF
                if ty == "bf16":
                    f = bits_to_bf16_f32
                else:
                    def f(x):
                        return x.astype(np.uint16).view(np.float16)
                return np.stack([f(lo), f(hi)], axis=1).astype(np.float32)

            a = np.stack([unpack(r) for r in o[0:4]], axis=1)  # [N, 4, 2]
            b = np.stack([unpack(r) for r in o[4:6]], axis=1)  # [N, 2, 2]
            c = np.stack([self.lanes(x) for x in o[6:10]],
                         axis=1).astype(np.float32).reshape(self.N, 2, 2)
            d = self.mma_sync(a, b, c).reshape(self.N, 4)
            return [d[:, i] for i in range(4)]
        if n == "memref.extract_aligned_pointer_as_index":
            view = o[0]
            assert view.buf.kind == "shared", \
                "only shared-memory addresses are modelled"
            # The aligned pointer is the allocation's (this block's copy).
            return np.full(self.N, view.buf.addr, np.int64)
        if n == "gpu.shuffle":
            assert "shuffle_mode xor" in op.text, op.text
            assert np.ndim(o[1]) == 0 and int(o[2]) == LANES, \
                "shuffle: uniform xor offset, warp width"
            assert self.T % LANES == 0, "shuffle in a block of partial warps"
            self.check_warp_uniform(mask, "gpu.shuffle")
            lane = np.arange(self.N)
            src = (lane // LANES) * LANES + ((lane % LANES) ^ int(o[1]))
            return [self.lanes(o[0])[src], np.ones(self.N, bool)]
        if n == "nvgpu.ldmatrix":
            out, warps = self.ldmatrix(op, o[0], o[1:], mask)
            self.ldmatrix_count += warps
            return out
        if n == "nvgpu.device_async_copy":
            self.async_copy_count += self.async_copy(op, o, mask)
            return np.zeros(self.N, np.int64)
        if n == "nvgpu.mma.sync":
            assert "mmaShape = [16, 8, 16]" in op.text, op.text
            assert self.T % LANES == 0, "mma.sync in a block of partial warps"
            self.check_warp_uniform(mask, "mma.sync")
            return self.nvgpu_mma(op, o)
        r = self.eval_core(op, o, mask)
        if r is not UNHANDLED:
            return r
        raise NotImplementedError(f"op {n}")

    # -- what gpuemu.core asks of the emulator -------------------------------
    def check_warpgroups(self, mask, op):
        # Every block runs the kernel's wgmma steps at once; a wgmma op
        # under control flow that leaves some lanes out is not modelled.
        if not mask.all() or self.T % WARPGROUP:
            raise NotImplementedError(f"{op.name} needs every lane of whole "
                                      "warpgroups")

    def check_whole_warps(self, mask, what):
        assert self.T % LANES == 0, f"{what} in a block of partial warps"
        self.check_warp_uniform(mask, what)

    def register_values(self, raw, elem):
        return bits_to_bf16_f32(raw) if elem == "bf16" else raw

    def note_read(self, buf):
        if self.current is not None:
            self.current["reads"].add(id(buf))

    def tensor_map(self, op, env):
        """nvgpu.tma.create.descriptor on the host: the tensor map the
        runtime encodes from the memref's descriptor and the box."""
        view = env[op.operands[0]]
        box = [int(np.asarray(env[x]).reshape(-1)[0])
               for x in op.operands[1:]]
        if view.buf.kind != "global":
            raise EmulationError(f"tensor map of a {view.buf.kind} buffer "
                                 f"({view.buf.name})")
        return make_tensor_map(op, view.buf.flat, view.buf.elem,
                               int(view.offset), view.shape, view.strides,
                               box, owner=view.buf)

    def check_warp_uniform(self, mask, what):
        w = mask.reshape(-1, LANES)
        if not (w.all(axis=1) | ~w.any(axis=1)).all():
            raise EmulationError(f"{what} with part of a warp inactive")

    # -- arithmetic ---------------------------------------------------------
    def arith(self, op, n, o):
        rt = result_types(op)
        relem = scalar_elem(rt[0]) if rt else None
        ints = {
            "arith.addi": lambda a, b: a + b,
            "arith.subi": lambda a, b: a - b,
            "arith.muli": lambda a, b: a * b,
            "arith.andi": lambda a, b: a & b,
            "arith.ori": lambda a, b: a | b,
            "arith.xori": lambda a, b: a ^ b,
            "arith.shli": lambda a, b: a << b,
            "arith.shrui": lambda a, b: a >> b,
            "arith.shrsi": lambda a, b: a >> b,
            "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
            "arith.maxui": np.maximum, "arith.minui": np.minimum,
        }
        if n in ints:
            a, b = o
            if relem == "i1":
                return {"arith.andi": np.logical_and,
                        "arith.ori": np.logical_or,
                        "arith.xori": np.logical_xor}[n](a, b)
            return ints[n](np.int64(a) if np.ndim(a) == 0 else a,
                           np.int64(b) if np.ndim(b) == 0 else b)
        if n in ("arith.divui", "arith.remui", "arith.divsi", "arith.remsi",
                 "arith.floordivsi", "arith.ceildivsi"):
            a, b = np.asarray(o[0], np.int64), np.asarray(o[1], np.int64)
            bs = np.where(b == 0, 1, b)
            if n == "arith.floordivsi":
                return a // bs
            if n == "arith.ceildivsi":
                return -((-a) // bs)
            q = np.trunc(a / bs).astype(np.int64) if n.endswith("si") \
                else a // bs
            if "div" in n:
                return q
            return a - q * bs
        if n in ("arith.index_cast", "arith.index_castui", "arith.extsi",
                 "arith.extui", "arith.trunci"):
            return np.asarray(o[0]).astype(np.int64)
        if n == "arith.cmpi":
            pred = int(re.search(r"predicate = (\d+)", op.text).group(1))
            f = [np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                 np.greater_equal, np.less, np.less_equal, np.greater,
                 np.greater_equal][pred]
            return f(o[0], o[1])
        if n == "arith.cmpf":
            pred = int(re.search(r"predicate = (\d+)", op.text).group(1))
            a = np.asarray(o[0], np.float64)
            b = np.asarray(o[1], np.float64)
            unord = np.isnan(a) | np.isnan(b)
            base = [None, np.equal, np.greater, np.greater_equal, np.less,
                    np.less_equal, np.not_equal, None][pred % 8]
            with np.errstate(invalid="ignore"):
                if pred == 0:
                    return np.zeros(np.broadcast(a, b).shape, bool)
                if pred == 15:
                    return np.ones(np.broadcast(a, b).shape, bool)
                if pred == 7:
                    return ~unord
                if pred == 14:
                    return unord
                r = base(a, b)
            return (r & ~unord) if pred < 8 else (r | unord)
        if n == "arith.select":
            c = o[0]
            if np.ndim(c) == 0:
                return o[1] if c else o[2]
            a, b = self.lanes(o[1]), self.lanes(o[2])
            c = np.asarray(c).reshape(np.shape(c) + (1,) * (a.ndim - np.ndim(c)))
            return np.where(c, a, b)
        floats = {"arith.addf": np.add, "arith.subf": np.subtract,
                  "arith.mulf": np.multiply, "arith.divf": np.divide,
                  "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
                  "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
                  "math.powf": np.power}
        with np.errstate(all="ignore"):
            if n in floats:
                # f32 ops in float32 (IEEE, correctly rounded); f16/bf16 via
                # f32, which rounds these ops correctly too.
                a = np.asarray(o[0], np.float32)
                b = np.asarray(o[1], np.float32)
                return round_to(floats[n](a, b), relem)
            if n == "arith.negf":
                return -np.asarray(o[0])
            if n == "math.fma":
                r = (np.asarray(o[0], np.float64) * np.asarray(o[1], np.float64)
                     + np.asarray(o[2], np.float64))
                return round_to(r.astype(np.float32), relem)
            unary = {"math.exp": np.exp, "math.tanh": np.tanh,
                     "math.sin": np.sin, "math.cos": np.cos,
                     "math.sqrt": np.sqrt, "math.log": np.log,
                     "math.rsqrt": lambda x: 1.0 / np.sqrt(x),
                     "math.absf": np.abs,
                     "math.erf": np.vectorize(math.erf, otypes=[np.float64]),
                     "math.exp2": np.exp2}
            if n in unary:
                r = unary[n](np.asarray(o[0], np.float64))
                return round_to(r.astype(np.float32), relem)
        if n in ("arith.truncf", "arith.extf"):
            return round_to(np.asarray(o[0], np.float32), relem)
        if n in ("arith.sitofp", "arith.uitofp"):
            return round_to(np.asarray(o[0], np.float64).astype(np.float32),
                            relem)
        if n in ("arith.fptosi", "arith.fptoui"):
            return np.trunc(np.asarray(o[0], np.float64)).astype(np.int64)
        if n == "arith.bitcast":
            raise NotImplementedError(op.text[:200])
        raise NotImplementedError(f"op {n}")

    # -- mma.sync -----------------------------------------------------------
    def nvgpu_mma(self, op, o):
        N = self.N
        a, b, c = (self.lanes(x) for x in o)
        assert a.shape == (N, 4, 2) and b.shape == (N, 2, 2) and \
            c.shape == (N, 2, 2), (a.shape, b.shape, c.shape)
        ty = op.text.rsplit(" : (", 1)[1]
        assert re.match(r"vector<4x2x(f16|bf16)>", ty), ty
        return self.mma_sync(a, b, c)

    def mma_sync(self, a, b, c):
        """a [N, 4, 2], b [N, 2, 2] (f16/bf16 values), c [N, 2, 2] f32 in
        register order -> d [N, 2, 2]: one m16n8k16 per warp."""
        N = self.N
        d = self.mma(a.reshape(N, 8).astype(np.float64),
                     b.reshape(N, 4).astype(np.float64), c.reshape(N, 4))
        return d.reshape(N, 2, 2)
