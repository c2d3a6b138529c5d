"""The memref ops of the whole-model emulator (gpu_model_emulator.py), as a
mixin of its Emulator: the views that subview / reinterpret_cast /
expand_shape / collapse_shape and friends make, and the per-lane loads,
stores and copies through them (shared-memory accesses are recorded for
the race checks of gpuemu.core).
"""

import re

import numpy as np

from gpuemu.core import EmulationError
from gpuemu.host import View, reassociation, scalar_or_lanes
from gpuemu.ir import DYNAMIC, parse_memref, props, result_types, row_major
from gpuemu.numerics import bits_to_bf16_f32, f32_to_bf16_bits


class MemoryOps:
    def view_op(self, op, env, mask=None):
        """The view an op makes of its source. Sizes and strides come from
        the source's run-time shape (a dynamic `?` of the result type is
        computed, a static one checked)."""
        src = env[op.operands[0]]
        shape, elem, strides, static_off, _ = parse_memref(result_types(op)[0])
        assert elem == src.buf.elem
        offset = src.offset
        type_shape, type_strides = shape, strides
        if op.name == "memref.subview":
            seg = props(op, "operandSegmentSizes")
            dyn = iter([env[x] for x in op.operands[1:]])
            offs = [next(dyn) if v == DYNAMIC else np.int64(v)
                    for v in props(op, "static_offsets")]
            static_sizes = props(op, "static_sizes")
            # A dynamic size may differ between lanes (a kernel's edge tile).
            sizes = [scalar_or_lanes(next(dyn)) if v == DYNAMIC else v
                     for v in static_sizes]
            steps = [int(next(dyn)) if v == DYNAMIC else v
                     for v in props(op, "static_strides")]
            assert seg[2] == static_sizes.count(DYNAMIC)
            for d, (off, size, step) in enumerate(zip(offs, sizes, steps)):
                lo = np.asarray(off)
                size = np.asarray(size)
                bad = (size > 0) & ((lo < 0) | (lo + (size - 1) * step >=
                                               src.shape[d]))
                # Only active lanes take views (inactive ones of a guarded
                # partial block compute offsets past the edge).
                if np.ndim(bad) and mask is not None and \
                        np.shape(bad) == mask.shape:
                    bad = bad & mask
                if np.any(bad):
                    raise EmulationError(f"subview out of bounds: "
                                         f"{op.text[:200]}")
                offset = offset + off * src.strides[d]
            full = [s * st for s, st in zip(src.strides, steps)]
            # Rank reduction drops static unit dimensions (from the front,
            # as many as the result type has fewer).
            drop = len(sizes) - len(type_shape)
            kept = []
            for d in range(len(sizes)):
                if drop and static_sizes[d] == 1:
                    drop -= 1
                    continue
                kept.append(d)
            assert not drop, op.text[:200]
            shape = [sizes[d] for d in kept]
            strides = [full[d] for d in kept]
        elif op.name == "memref.expand_shape":
            dyn = iter([env[x] for x in op.operands[1:]])
            shape = [int(next(dyn)) if v == DYNAMIC else v
                     for v in props(op, "static_output_shape")]
            strides = [None] * len(shape)
            for s_axis, group in enumerate(reassociation(op)):
                st = src.strides[s_axis]
                assert int(np.prod([shape[d] for d in group])) == \
                    src.shape[s_axis], op.text[:200]
                for d in reversed(group):
                    strides[d] = st
                    st *= shape[d]
        elif op.name == "memref.collapse_shape":
            shape, strides = [], []
            for group in reassociation(op):
                # Contiguous within the group (unit dimensions aside).
                inner = src.strides[group[-1]]
                expect = inner
                for d in reversed(group):
                    if src.shape[d] != 1:
                        assert src.strides[d] == expect, op.text[:200]
                    expect *= src.shape[d]
                shape.append(int(np.prod([src.shape[d] for d in group])))
                strides.append(inner)
        elif op.name == "memref.cast":
            shape, strides = list(src.shape), list(src.strides)
        elif op.name == "memref.transpose":
            # The same elements, dimensions (with their strides) permuted:
            # the result type's layout says where they are. A dynamic size
            # (run-time rows) is the source's size of the same stride. A
            # run-time stride (of a buffer with run-time sizes; at most one)
            # is the source dimension the static strides leave over.
            if None in strides:
                left = list(range(len(src.shape)))
                perm = [None] * len(strides)
                for d, st in enumerate(strides):
                    if st is None:
                        continue
                    cands = [e for e in left if src.strides[e] == st and
                             shape[d] in (None, src.shape[e])]
                    assert cands, op.text[:200]
                    perm[d] = cands[0]
                    left.remove(cands[0])
                assert len(left) == 1 and perm.count(None) == 1, op.text[:200]
                perm[perm.index(None)] = left[0]
                strides = [src.strides[e] for e in perm]
                shape = [src.shape[e] for e in perm]
            else:
                src_sizes = dict(zip(src.strides, src.shape))
                assert len(src_sizes) == len(src.shape), op.text[:200]
                shape = [src_sizes[st] if sz is None else sz
                         for sz, st in zip(shape, strides)]
            assert sorted(zip(shape, strides)) == \
                sorted(zip(src.shape, src.strides)), op.text[:200]
        else:
            raise NotImplementedError(op.name + " " + op.text[:300])
        assert len(shape) == len(type_shape), op.text[:200]
        for got, want in zip(shape, type_shape):
            got = np.asarray(got)
            # Per-lane sizes only matter in active lanes (a guarded partial
            # block computes sizes <= 0 in the lanes past its edge).
            if got.ndim and mask is not None and got.shape == mask.shape:
                got = got[mask]
            assert want is None or np.all(got == want), \
                (op.text[:200], shape)
        if type_strides is not None:
            for got, want, size in zip(strides, type_strides, shape):
                assert want is None or got == want or size == 1, \
                    (op.text[:200], strides, type_strides)
        elif all(np.ndim(d) == 0 for d in shape):
            # An identity layout: row-major (unit dimensions aside).
            for got, want, size in zip(strides, row_major(shape), shape):
                assert got == want or size == 1, (op.text[:200], strides)
        if static_off is not None and np.ndim(offset) == 0:
            assert int(offset) == static_off, (op.text[:200], offset,
                                               static_off)
        return View(src.buf, offset, shape, strides)

    def flat_index(self, op, view, idx, mask, width):
        """Flat buffer indices [active lanes, width] of an access."""
        rank = len(view.shape)
        assert len(idx) == rank, op.text[:200]
        if view.buf.kind == "host" and self.on_device and \
                not self.host_memory_visible:
            raise EmulationError(
                f"a kernel accesses host memory ({view.buf.name}, a "
                f"memref.global of the host module): {op.text[:120]}")
        sel = mask
        flat = np.asarray(view.offset)
        flat = flat[sel] if flat.ndim else flat
        for d in range(rank):
            i = np.asarray(idx[d])
            i = i[sel] if i.ndim else i
            extent = np.asarray(view.shape[d])  # per lane in edge tiles
            extent = extent[sel] if extent.ndim else extent
            hi = extent - (width if d == rank - 1 else 1)
            if ((i < 0) | (i > hi)).any():
                raise EmulationError(
                    f"out-of-bounds access (dim {d}, extent "
                    f"{view.shape[d]}): {op.text[:160]}")
            flat = flat + i * view.strides[d]
        flat = np.broadcast_to(flat, (int(sel.sum()),))
        last = view.strides[-1] if rank else 1
        flat = flat[:, None] + np.arange(width)[None, :] * last
        if flat.size and (flat.min() < 0 or flat.max() >= view.buf.flat.size):
            raise EmulationError(f"access outside its allocation: "
                                 f"{op.text[:160]}")
        m = re.search(r"alignment = (\d+) : i64", op.text)
        if m and op.name.startswith("vector.") and \
                ((flat[:, 0] * view.buf.flat.itemsize) % int(m.group(1))).any():
            raise EmulationError(f"misaligned access: {op.text[:160]}")
        return flat, sel

    def load(self, op, view, idx, mask, width):
        w = width or 1
        flat, sel = self.flat_index(op, view, idx, mask, w)
        buf = view.buf
        if self.current is not None and buf.kind in ("global", "host"):
            self.current["reads"].add(id(buf))
        if buf.kind == "shared":
            self.check_inflight(buf, flat, op)
        raw = buf.flat[flat]
        if buf.kind == "shared":
            self.track(buf, flat, np.nonzero(sel)[0], write=False)
        vals = bits_to_bf16_f32(raw) if buf.elem == "bf16" else raw
        out = np.zeros((self.N, w), vals.dtype)
        out[sel] = vals
        return out[:, 0] if width is None else out

    def store(self, op, val, view, idx, mask, width):
        w = width or 1
        flat, sel = self.flat_index(op, view, idx, mask, w)
        buf = view.buf
        if self.current is not None and buf.kind in ("global", "host"):
            self.current["writes"].add(id(buf))
        v = self.lanes(val).reshape(self.N, w)[sel]
        if buf.elem == "bf16":
            v = f32_to_bf16_bits(v)
        if buf.kind == "shared":
            self.shared_write(buf, flat, np.nonzero(sel)[0], op)
        buf.flat[flat] = v

    def copy(self, src, dst, mask):
        assert src.shape == dst.shape
        for idx in np.ndindex(*src.shape):
            fake = type("op", (), {"text": "memref.copy", "name":
                                   "memref.copy"})
            v = self.load(fake, src, [np.int64(i) for i in idx], mask, None)
            self.store(fake, v, dst, [np.int64(i) for i in idx], mask, None)
