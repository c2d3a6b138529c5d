"""What the kernel emulator and the whole-model emulator share beyond the
parser and the ISA models: shared-memory race bookkeeping and the device ops
whose rules are the same in both (cp.async groups, TMA loads and mbarriers,
ldmatrix, mma.sync, wgmma with its fences and commit groups), and the case
runner of the emulation scripts.

Both run the threads of their blocks in lockstep, each SSA value holding
one value per lane; DeviceCore's methods work on that form. The emulator
using it provides:

- N: the lanes executing (threads of one block, or of many blocks side by
  side); block_of [N]: each lane's block (0-based among those running);
  block_epoch [blocks]: each block's barrier epoch;
- mutate, clock (ops executed), Error (the exception its checks raise) and
  SNIPPET (how much of an op's text its messages quote);
- lanes(v): a value as one per lane; flat_index(op, view, idx, mask,
  width): the checked element indices [active lanes, width] of an access;
  check_whole_warps(mask, what), check_warpgroups(mask, op);
  register_values(raw, elem): loaded elements as register values;
  note_read(buf): a global buffer read (for the model's stream ordering).

Views (the memref values) have .buf (the allocation, which for shared
memory carries the race state of init_shared_state), .offset, .shape,
.strides, .elem, .itemsize and .flat (the allocation's elements).
"""

import re

import numpy as np

from .ir import props, result_types
from .numerics import (LANES, WARPGROUP, bits_to_bf16_f32,
                       decode_wgmma_descriptor, ldmatrix_receivers,
                       mutate_fragments, warps_mma, wgmma_compute,
                       wgmma_kmajor_offsets)
from .tma import MBarriers, TensorMap, TmaError


class EmulationError(AssertionError):
    """A kernel or host program breaks a rule the emulator checks."""


class RaceError(EmulationError):
    pass


# The value an op the core does not model returns from DeviceCore.eval_core.
UNHANDLED = object()


# ---------------------------------------------------------------------------
# Shared-memory race bookkeeping.


def init_shared_state(buf, n):
    """The race state of a shared-memory allocation of `n` elements."""
    buf.inflight = np.zeros(n, int)  # cp.async / TMA writes not landed
    buf.w_epoch = np.full(n, -1)
    buf.w_thread = np.full(n, -1)
    buf.r_epoch = np.full(n, -1)
    buf.r_thread = np.full(n, -1)  # -2: several readers
    # wgmma: sources of in-flight wgmma (must not be overwritten), and the
    # lane whose generic-proxy write of an element no fence.proxy.async has
    # ordered before async-proxy reads yet.
    buf.wgmma_reading = np.zeros(n, int)
    buf.unfenced = np.full(n, -1)
    buf.addr = None  # shared-state-space address (of each block's copy)
    buf.block_size = None  # elements of each block's copy


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


class Regs(list):
    """An LLVM struct of registers (one per-lane array per member) and
    what the wgmma model needs to know about it: `written` is when
    (emulator clock) an instruction other than wgmma last wrote it, or None
    for a wgmma result; `wgmma` the in-flight record of the wgmma that
    produces it."""

    def __init__(self, values, written=None, wgmma=None):
        super().__init__(values)
        self.written = written
        self.wgmma = wgmma


def make_tensor_map(op, flat, elem, offset, shape, strides, box, owner):
    """nvgpu.tma.create.descriptor: the tensor map the runtime encodes from
    the memref's descriptor and the box (TensorMap checks what the driver
    would)."""
    opts = dict(re.findall(r"(swizzle|l2promo|oob|interleave) = (\w+)",
                           result_types(op)[0]))
    return TensorMap(flat, elem, offset, shape, strides, box,
                     swizzle=opts["swizzle"], interleave=opts["interleave"],
                     oob=opts["oob"], owner=owner)


def wgmma_shape(op):
    """(N, input type) of a wgmma.mma_async .m64nNk16 .f32.{f16,bf16} with
    A and B K-major, D = A B + D (the form modelled)."""
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
    return n, ty


class DeviceCore:
    """The device-side state and ops both emulators model alike (see the
    module docstring for what the emulator provides)."""

    def init_counters(self):
        self.clock = 0  # ops executed: orders register writes and fences
        self.mma_count = 0  # warps that executed an mma.sync
        self.ldmatrix_count = 0
        self.async_copy_count = 0
        self.wgmma_count = 0  # warpgroups that executed a wgmma.mma_async
        self.wgmma_macs = 0
        self.tma_count = 0  # TMA loads (cp.async.bulk.tensor) issued

    def reset_blocks(self):
        """Fresh per-block state for the N lanes about to run."""
        # cp.async: copies issued and not landed (dicts of buf, flat [n, w],
        # vals, lanes [n] and group [n], -1 while not committed), groups
        # committed per lane.
        self.pending = []
        self.commits = np.zeros(self.N, np.int64)
        # wgmma: in-flight records (dicts of group, reads, done, n), groups
        # committed (the warpgroups run in lockstep: wgmma ops are executed
        # by all lanes), the clock of the last wgmma.fence.
        self.wg_pending = []
        self.wg_commits = 0
        self.wg_fence = -1
        self.shared = []  # shared allocations, placed from 0x410 on
        self.smem_next = 0x410  # 16-byte (not more) aligned
        self.mbarriers = []  # per nvgpu.mbarrier.create: a group per block

    def place_shared(self, buf, size, align):
        """Gives a shared allocation of `size` elements (per block) its
        address: the next 16-byte boundary, or its alignment."""
        align = max(16, align or 16)
        buf.addr = (self.smem_next + align - 1) // align * align
        buf.block_size = size
        self.smem_next = (buf.addr + size * buf.flat.itemsize + 15) // 16 * 16
        self.shared.append(buf)

    def check_tma_idle(self):
        for groups in self.mbarriers:
            if not all(g.idle() for g in groups):
                raise RaceError("a thread block ends with TMA loads in "
                                "flight")

    # -- race bookkeeping ---------------------------------------------------
    def record(self, buf, flat, lanes, write):
        """Race bookkeeping of elements flat[i] accessed by lanes[i]."""
        flat = np.asarray(flat).reshape(-1)
        lanes = np.asarray(lanes).reshape(-1)
        e = self.block_epoch[self.block_of[lanes]]
        record_shared_access(buf, flat, lanes, e, write, RaceError)

    def track(self, buf, flat, lanes, write):
        """Race bookkeeping of an access of elements flat [n, w] by lanes
        [n] (one row each)."""
        self.record(buf, flat, np.broadcast_to(
            np.asarray(lanes)[:, None], flat.shape), write)

    def check_inflight(self, buf, flat, op):
        if buf.shared and buf.inflight[np.asarray(flat).reshape(-1)].any():
            raise RaceError("shared-memory race: access to an element a "
                            "cp.async or TMA load is still writing (not "
                            f"waited for): {op.text[:120]}")

    def check_wgmma_sources(self, buf, flat, op):
        if buf.shared and \
                buf.wgmma_reading[np.asarray(flat).reshape(-1)].any():
            raise RaceError("shared-memory write to a source of an "
                            f"in-flight wgmma: {op.text[:120]}")

    def check_wgmma_regs(self, regs, op):
        rec = getattr(regs, "wgmma", None)
        if rec is not None and not rec["done"]:
            raise RaceError("wgmma accumulator registers accessed before a "
                            "wgmma.wait_group completed their group: "
                            f"{op.text[:120]}")

    def shared_write(self, buf, flat, lanes, op):
        """The checks and bookkeeping of a generic-proxy store of elements
        flat [n, w] by lanes [n]."""
        self.check_inflight(buf, flat, op)
        self.check_wgmma_sources(buf, flat, op)
        self.track(buf, flat, lanes, write=True)
        buf.unfenced[flat] = lanes[:, None]

    # -- the ops ------------------------------------------------------------
    def eval_core(self, op, o, mask):
        """Runs `op` (operand values `o`) if the core models it: its result
        (None for none), else UNHANDLED."""
        n = op.name
        if n == "llvm.extractvalue":
            self.check_wgmma_regs(o[0], op)
            return o[0][props(op, "position")[0]]
        if n == "llvm.mlir.poison":
            count = result_types(op)[0].count("f32")
            return Regs([np.zeros(self.N, np.float32)] * count,
                        written=self.clock)
        if n == "llvm.insertvalue":
            self.check_wgmma_regs(o[0], op)
            regs = Regs(o[0], written=self.clock)
            i = props(op, "position")[0]
            regs[i] = np.where(mask, self.lanes(o[1]), self.lanes(o[0][i]))
            return regs
        if n == "nvvm.fence.proxy":
            assert "proxy_kind<async.shared>" in op.text, op.text
            if self.mutate != "drop-proxy-fence":
                lanes = np.nonzero(mask)[0]
                for buf in self.shared:
                    buf.unfenced[np.isin(buf.unfenced, lanes)] = -1
            return None
        if n == "nvvm.wgmma.fence.aligned":
            self.check_warpgroups(mask, op)
            if self.mutate != "drop-wgmma-fence":
                self.wg_fence = self.clock
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
            allowed = int(re.search(r"group = (\d+) : i64",
                                    op.text).group(1))
            if self.mutate == "wgmma-wait-one-more":
                allowed += 1
            if self.mutate != "drop-wgmma-wait":
                self.wgmma_wait(allowed)
            return None
        if n.startswith("nvgpu.mbarrier.") or n == "nvgpu.tma.async.load":
            return self.tma_op(op, o, mask)
        if n == "nvgpu.device_async_create_group":
            self.commit_group(mask)
            return np.zeros(self.N, np.int64)
        if n == "nvgpu.device_async_wait":
            m = re.search(r"numGroups = (\d+) : i32", op.text)
            self.wait_group(int(m.group(1)) if m else 0, mask)
            return None
        return UNHANDLED

    # -- mma.sync -----------------------------------------------------------
    def mma(self, a, b, c):
        """a [N, 8], b [N, 4] float64 and c [N, 4] fragments in register
        order -> d [N, 4] f32: one m16n8k16 per warp."""
        a, b, c = mutate_fragments(self.mutate, a, b, c)
        self.mma_count += self.N // LANES
        return warps_mma(a, b, c)

    # -- sm_80 data movement ------------------------------------------------
    def ldmatrix(self, op, view, idx, mask):
        """ldmatrix.sync.aligned.m8n8.x{tiles}[.trans].shared.b16 by every
        active warp: [N, tiles, 2] (register i of a lane is its pair of
        matrix i) and the number of warps."""
        tiles = int(re.search(r"numTiles = (\d+) : i32", op.text).group(1))
        trans = "transpose = true" in op.text
        if self.mutate == "flip-ldmatrix-trans":
            trans = not trans
        buf = view.buf
        assert buf.shared and buf.elem in ("f16", "bf16"), \
            "ldmatrix reads 16-bit elements of shared memory"
        assert view.strides[-1] == 1
        self.check_whole_warps(mask, "ldmatrix")
        lane = np.arange(self.N) % LANES
        used = mask & (lane < 8 * tiles)  # lanes whose row address counts
        flat, _ = self.flat_index(op, view, idx, used, 8)
        if ((flat[:, 0] * 2) % 16).any():
            raise self.Error(f"ldmatrix row address not 16-byte aligned: "
                             f"{op.text[:self.SNIPPET]}")
        rows = np.zeros(self.N, np.int64)
        rows[used] = flat[:, 0]
        warps = np.nonzero(mask.reshape(-1, LANES).all(axis=1))[0]
        # Row r of matrix i of warp w starts at rows[w * 32 + 8 i + r].
        start = rows.reshape(-1, LANES)[warps, :8 * tiles].reshape(
            len(warps), tiles, 8)
        elems = start[..., None] + np.arange(8)  # [warps, tiles, 8, 8]
        self.check_inflight(buf, elems, op)
        rlane, relem = ldmatrix_receivers(tiles, trans)
        dest = warps[:, None, None, None] * LANES + rlane[None]
        vals = self.register_values(buf.flat[elems], buf.elem)
        out = np.zeros((self.N, tiles, 2), vals.dtype)
        tile = np.broadcast_to(np.arange(tiles)[None, :, None, None],
                               dest.shape)
        out[dest, tile, np.broadcast_to(relem[None], dest.shape)] = vals
        # Each element counts as read by the lane that receives it.
        self.record(buf, elems, dest, write=False)
        return out, len(warps)

    def async_copy(self, op, o, mask):
        """cp.async global -> shared by the active lanes: issued now, landing
        when a wait_group completes its group. Returns the number of lanes
        that issued one."""
        seg = props(op, "operandSegmentSizes")
        dst, didx = o[0], o[1:1 + seg[1]]
        src = o[1 + seg[1]]
        sidx = o[2 + seg[1]:2 + seg[1] + seg[3]]
        count = int(re.search(r"dstElements = (\d+) : index",
                              op.text).group(1))
        size = dst.itemsize
        nbytes = count * size
        assert nbytes in (4, 8, 16), f"cp.async of {nbytes} bytes"
        if "bypassL1" in op.text:
            assert nbytes == 16, "cp.async.cg copies 16 bytes"
        assert dst.shared and not src.shared, \
            "cp.async copies global to shared memory"
        assert dst.elem == src.elem
        assert dst.strides[-1] == 1 and src.strides[-1] == 1
        if seg[4]:
            n_src = self.lanes(o[2 + seg[1] + seg[3]]).astype(np.int64)
        else:
            n_src = np.full(self.N, count, np.int64)
        if self.mutate == "drop-zero-fill":
            n_src = np.full(self.N, count, np.int64)
        assert ((n_src >= 0) & (n_src <= count)).all()
        if self.mutate == "async-copy-wrong-stage" and len(didx) >= 3:
            didx = [(self.lanes(didx[0]) + 1) % dst.shape[0]] + \
                list(didx[1:])
        dflat, _ = self.flat_index(op, dst, didx, mask, count)
        snippet = op.text[:self.SNIPPET]
        if ((dflat[:, 0] * size) % nbytes).any():
            raise self.Error(f"misaligned cp.async destination: {snippet}")
        # The source: only srcElements are read (none for zero-fill only).
        lanes = np.nonzero(mask)[0]
        reads = mask & (n_src > 0)
        sflat = np.zeros(self.N, np.int64)
        if reads.any():
            f, _ = self.flat_index(op, src, sidx, reads, 1)
            last = np.asarray(self.lanes(sidx[-1]))[reads] + n_src[reads]
            if (last > src.shape[-1]).any():
                raise self.Error(f"out-of-bounds access: {snippet}")
            if ((f[:, 0] * size) % nbytes).any():
                raise self.Error(f"misaligned cp.async source: {snippet}")
            sflat[reads] = f[:, 0]
            self.note_read(src.buf)
        j = np.arange(count)[None, :]
        take = j < n_src[lanes][:, None]
        idx = np.where(take, sflat[lanes][:, None] + j, 0)
        vals = np.where(take, src.flat[idx], 0).astype(dst.flat.dtype)
        # Issue: the destination is being written from now on.
        buf = dst.buf
        self.check_inflight(buf, dflat, op)
        self.check_wgmma_sources(buf, dflat, op)
        self.track(buf, dflat, lanes, write=True)
        buf.inflight[dflat.reshape(-1)] += 1
        self.pending.append({"buf": buf, "flat": dflat, "vals": vals,
                             "lanes": lanes,
                             "group": np.full(lanes.size, -1)})
        return lanes.size

    def commit_group(self, mask):
        """cp.async.commit_group: each active lane's pending copies become
        its next group."""
        if self.mutate == "drop-async-commit":
            return
        for rec in self.pending:
            new = (rec["group"] < 0) & mask[rec["lanes"]]
            rec["group"][new] = self.commits[rec["lanes"][new]]
        self.commits[mask] += 1

    def wait_group(self, allowed, mask):
        """cp.async.wait_group N: all but each active lane's newest N groups
        land, as the issuing lane's writes at this point."""
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
                buf, flat = rec["buf"], rec["flat"][done]
                buf.inflight[flat.reshape(-1)] -= 1
                buf.flat[flat] = rec["vals"][done]
                self.track(buf, flat, lanes[done], write=True)
                buf.unfenced[flat] = lanes[done][:, None]
            if not done.all():
                keep.append({k: (v[~done] if isinstance(v, np.ndarray)
                                 else v) for k, v in rec.items()})
        self.pending = keep

    # -- sm_90a TMA and mbarriers (tma.py) ----------------------------------
    def tma_op(self, op, o, mask):
        """mbarrier and TMA ops: per block, by the lanes that execute them
        (thread 0 issues, every thread waits)."""
        n = op.name
        lanes = np.nonzero(mask)[0]
        blocks = self.block_of[lanes]

        def at(v):
            return np.broadcast_to(np.asarray(v), (self.N,))[lanes]

        if n == "nvgpu.mbarrier.create":
            count = int(re.search(r"num_barriers = (\d+)", op.text).group(1))
            groups = [MBarriers(count) for _ in range(len(self.block_epoch))]
            self.mbarriers.append(groups)
            return groups
        groups = o[0] if n != "nvgpu.tma.async.load" else o[1]
        if n == "nvgpu.mbarrier.init":
            for b, c, i in zip(blocks, at(o[1]), at(o[2])):
                groups[b].init(int(i), int(c))
            return None
        if n == "nvgpu.mbarrier.arrive.expect_tx":
            for b, tx, i in zip(blocks, at(o[1]), at(o[2])):
                tx = int(tx) // 2 if self.mutate == "tma-expect-tx-short" \
                    else int(tx)
                groups[b].arrive_expect_tx(int(i), tx, 1)
            return None
        if n == "nvgpu.mbarrier.try_wait.parity":
            parity, idx = at(o[1]), at(o[3])
            for b in np.unique(blocks):
                sel = blocks == b
                p, i = parity[sel], idx[sel]
                if not ((p == p[0]).all() and (i == i[0]).all()):
                    raise self.Error("divergent mbarrier wait")
                if self.mutate != "drop-mbarrier-wait":
                    groups[b].wait_parity(int(i[0]), int(bool(p[0])))
            return None
        if n == "nvgpu.tma.async.load":
            return self.tma_load(op, o, lanes, blocks, at)
        raise NotImplementedError(n)

    def tma_load(self, op, o, lanes, blocks, at):
        """cp.async.bulk.tensor global -> shared, completing on an mbarrier:
        issued by every active lane."""
        seg = props(op, "operandSegmentSizes")
        dst, groups, tmap = o[0], o[1], o[2]
        coords = [at(c) for c in o[3:3 + seg[3]]]
        idx = at(o[3 + seg[3]])
        assert seg[5] == 0 and seg[6] == 0, "multicast / predicate"
        assert isinstance(tmap, TensorMap), "TMA without a tensor map"
        buf = dst.buf
        assert buf.shared and buf.elem == tmap.elem, "TMA element type"
        self.note_read(tmap.owner)
        start = at(dst.offset)
        for k, lane in enumerate(lanes):
            b = int(blocks[k])
            c = [int(x[k]) for x in coords]
            if self.mutate == "tma-wrong-box-coordinate":
                c[1] += 8
            first = int(start[k])
            local = first - b * buf.block_size
            if (buf.addr + local * buf.flat.itemsize) % 128:
                raise TmaError("cp.async.bulk.tensor destination not "
                               "128-byte aligned")
            if local < 0 or local + tmap.box_elems > buf.block_size:
                raise self.Error("TMA box past its shared buffer")
            flat = first + np.arange(tmap.box_elems)
            # Issue: the destination is being written from now on.
            self.check_inflight(buf, flat, op)
            self.check_wgmma_sources(buf, flat, op)
            self.record(buf, flat, np.full(flat.shape, lane), write=True)
            buf.inflight[flat] += 1

            def land(buf=buf, flat=flat, c=c):
                buf.inflight[flat] -= 1
                buf.flat[flat] = tmap.read_box(c, self.mutate)

            groups[b].attach(int(idx[k]), tmap.box_bytes, land)
            self.tma_count += 1
        return None

    # -- sm_90a warpgroup MMA -----------------------------------------------
    def shared_at(self, addr, nbytes):
        """The shared allocation holding bytes [addr, addr + nbytes) of a
        block's shared window."""
        for buf in self.shared:
            if buf.addr <= addr and \
                    addr + nbytes <= buf.addr + buf.block_size * \
                    buf.flat.itemsize:
                if (addr - buf.addr) % buf.flat.itemsize:
                    raise self.Error("misaligned wgmma operand")
                return buf
        raise self.Error(f"wgmma operand outside shared memory: "
                         f"{addr:#x}+{nbytes}")

    def wgmma_operand(self, desc, rows, ty, op):
        """A K-major rows x 16 operand of every warpgroup (its descriptor
        uniform over the warpgroup): values [groups, rows, 16] (float64)
        and the (allocation, elements) read."""
        desc = self.lanes(desc).reshape(-1, WARPGROUP)
        if not (desc == desc[:, :1]).all():
            raise self.Error("wgmma descriptor not uniform")
        blocks = self.block_of[::WARPGROUP]  # the block of each warpgroup
        vals = np.zeros((desc.shape[0], rows, 16))
        reads = []
        for d in np.unique(desc[:, 0]):
            gs = np.nonzero(desc[:, 0] == d)[0]
            start, lbo, sbo = decode_wgmma_descriptor(d, self.mutate)
            if start % 16:
                raise self.Error("wgmma matrix start address not 16-byte "
                                 "aligned")
            addrs = start + wgmma_kmajor_offsets(rows, lbo, sbo)
            lo, hi = int(addrs.min()), int(addrs.max()) + 2
            buf = self.shared_at(lo, hi - lo)
            if buf.elem != ty:
                raise self.Error(f"wgmma reads {ty} from {buf.elem}")
            # Each warpgroup reads its block's copy.
            flat = (blocks[gs] * buf.block_size)[:, None, None] + \
                ((addrs - buf.addr) // 2)[None]
            self.check_inflight(buf, flat, op)
            if (buf.unfenced[flat.reshape(-1)] >= 0).any():
                raise RaceError("wgmma reads (async proxy) a shared-memory "
                                "write of the generic proxy no "
                                "fence.proxy.async ordered before it: "
                                f"{op.text[:120]}")
            # The async proxy reads on behalf of the whole warpgroup
            # (thread -3): an element written since the block's last
            # barrier by any thread races.
            f = flat.reshape(-1)
            e = np.repeat(self.block_epoch[blocks[gs]], rows * 16)
            record_shared_access(buf, f, np.full(f.shape, -3), e, False,
                                 RaceError)
            raw = buf.flat[flat]
            vals[gs] = bits_to_bf16_f32(raw) if ty == "bf16" else raw
            reads.append((buf, f))
        return vals, reads

    def wgmma(self, op, o, mask):
        """wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} by every
        warpgroup: reads A and B at issue, records them as in flight until
        the commit group holding this wgmma is waited for, and returns the
        accumulators (visible only then)."""
        self.check_warpgroups(mask, op)
        n, ty = wgmma_shape(op)
        acc = o[0]
        assert len(acc) == n // 2, "accumulator struct of N / 2 registers"
        if acc.wgmma is None and not self.wg_fence > acc.written:
            raise RaceError("wgmma.mma_async on accumulator registers "
                            "written since the last wgmma.fence: "
                            f"{op.text[:120]}")
        if acc.wgmma is not None and acc.wgmma["n"] != n:
            raise self.Error("chained wgmma of another shape needs a "
                             "wgmma.fence")
        a, ra = self.wgmma_operand(o[1], 64, ty, op)
        b, rb = self.wgmma_operand(o[2], n, ty, op)
        G = self.N // WARPGROUP
        d = np.stack([self.lanes(r).astype(np.float32) for r in acc],
                     axis=1).reshape(G, WARPGROUP, n // 2)
        out = wgmma_compute(a, b, d, self.mutate).reshape(self.N, n // 2)
        for buf, f in ra + rb:
            np.add.at(buf.wgmma_reading, f, 1)
        rec = {"group": -1, "reads": ra + rb, "done": False, "n": n}
        self.wg_pending.append(rec)
        self.wgmma_count += G
        self.wgmma_macs += G * 64 * n * 16
        return Regs([out[:, i] for i in range(n // 2)], wgmma=rec)

    def wgmma_wait(self, allowed):
        """wgmma.wait_group N: every committed group but the newest N
        completes (its accumulators become readable, its sources free)."""
        keep = []
        for rec in self.wg_pending:
            if 0 <= rec["group"] < self.wg_commits - allowed:
                rec["done"] = True
                for buf, f in rec["reads"]:
                    np.subtract.at(buf.wgmma_reading, f, 1)
            else:
                keep.append(rec)
        self.wg_pending = keep
