"""The Tensor Memory Accelerator and mbarriers, modelled from the PTX ISA and
the CUDA driver API (one model, shared by gpu_kernel_emulator.py and
gpu_model_emulator.py through core.py).

- Tensor maps: nvgpu.tma.create.descriptor lowers to a call of the runtime's
  mgpuTensorMapEncodeTiledMemref(rank, memref descriptor, data type, ...,
  box), which encodes with cuTensorMapEncodeTiled. TensorMap decodes the
  same arguments the same way, independently of the pass: the driver's
  dimension 0 is the memref's innermost one (dims and box reversed), the
  byte strides of dimensions 1..rank-1 are the memref's outer strides
  reversed, the global address is the memref's start (its offset
  included). It checks what the driver documents: rank 1..5, a 16-byte
  aligned start, byte strides multiples of 16, box sizes in [1, 256], an
  inner box of a multiple of 16 bytes, an innermost stride of one element;
  swizzle and interleave other than none are rejected as not modelled.
- cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx
  (nvgpu.tma.async.load): the box at the given coordinates (innermost
  dimension first, as the PTX instruction takes them) is written to shared
  memory densely from the destination address (box dimension 0 fastest),
  elements outside the tensor zero-filled (OOB fill none). The copy is
  asynchronous: its destination is in flight from issue until the copy
  completes, which it does (complete_tx of its bytes on the mbarrier) only
  when a thread waits on that mbarrier and the phase cannot complete
  without it -- as late as the ISA allows, so any access to the
  destination before the wait is a race.
- mbarrier (PTX ISA "Parallel Synchronization and Communication
  Instructions: mbarrier"): init(count) sets the phase 0, pending arrivals
  count, tx-count 0; arrive.expect_tx(tx) adds tx to the tx-count, then
  arrives (one pending arrival fewer); complete_tx(bytes) subtracts; the
  current phase completes when both pending arrivals and tx-count are zero
  (phase + 1, pending arrivals reset to count). try_wait.parity(P) returns
  once the phase of parity P has completed, i.e. the current phase's parity
  is not P. A tx-count below zero is an error (undefined in the ISA), and a
  wait no in-flight copy can satisfy is a deadlock.
"""

import numpy as np

# CUtensorMapDataType values (cuda.h) and their element sizes.
TENSOR_MAP_DATA_TYPE = {"f16": 6, "f32": 7, "bf16": 9}
ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4}


class TmaError(AssertionError):
    pass


class DeadlockError(AssertionError):
    pass


class TensorMap:
    """A tiled tensor map as cuTensorMapEncodeTiled receives it from
    mgpuTensorMapEncodeTiledMemref. `flat` is the allocation (a flat
    array), `offset`, `sizes`, `strides` the memref view in elements (memref
    order, outermost first), `box` the box in memref order."""

    def __init__(self, flat, elem, offset, sizes, strides, box, swizzle="none",
                 interleave="none", oob="zero", owner=None):
        rank = len(sizes)
        eb = ELEM_BYTES[elem]
        if not 1 <= rank <= 5:
            raise TmaError(f"tensor map of rank {rank}")
        if strides[-1] != 1:
            raise TmaError("tensor map: innermost dimension not contiguous")
        if swizzle != "none" or interleave != "none":
            raise TmaError("swizzled or interleaved tensor maps are not "
                           "modelled")
        self.flat, self.elem, self.owner = flat, elem, owner
        self.offset = int(offset)
        self.oob_zero = oob == "zero"
        self.dims = [int(d) for d in reversed(sizes)]
        self.box = [int(b) for b in reversed(box)]
        self.byte_strides = [int(strides[rank - 2 - i]) * eb
                             for i in range(rank - 1)]
        # Allocations start 256-byte aligned (cuMemAlloc): the offset
        # decides the start's alignment.
        if (self.offset * eb) % 16:
            raise TmaError("tensor map global address not 16-byte aligned")
        for s in self.byte_strides:
            if s % 16 or not 0 < s < 2 ** 40:
                raise TmaError(f"tensor map byte stride {s} not a multiple "
                               "of 16")
        for d, b in zip(self.dims, self.box):
            if not 0 < d <= 2 ** 32 or not 0 < b <= 256:
                raise TmaError(f"tensor map dim {d} / box {b} out of range")
        if (self.box[0] * eb) % 16:
            raise TmaError("tensor map inner box not a multiple of 16 bytes")
        self.elem_strides = [1] + [s // eb for s in self.byte_strides]
        self.box_elems = int(np.prod(self.box))
        self.box_bytes = self.box_elems * eb

    def box_source(self, coords):
        """For the box at `coords` (innermost first), the flat source index
        of every destination element (box dimension 0 fastest) and whether
        it lies inside the tensor (else it is zero-filled)."""
        rank = len(self.dims)
        assert len(coords) == rank, "one coordinate per dimension"
        grids = np.meshgrid(*[np.arange(b) for b in reversed(self.box)],
                            indexing="ij")  # outermost dimension first
        flat = np.full(grids[0].shape, self.offset, np.int64)
        inside = np.ones(grids[0].shape, bool)
        for i in range(rank):
            c = int(coords[i]) + grids[rank - 1 - i]
            inside &= (c >= 0) & (c < self.dims[i])
            flat += np.clip(c, 0, self.dims[i] - 1) * self.elem_strides[i]
        return flat.reshape(-1), inside.reshape(-1)

    def read_box(self, coords, mutate=None):
        """The box's values (zero outside the tensor) as the raw element
        type of the allocation."""
        src, inside = self.box_source(coords)
        vals = self.flat[src].copy()
        if not (self.oob_zero and mutate != "tma-no-oob-fill"):
            return vals  # OOB elements: whatever the clamped read gave
        vals[~inside] = 0
        return vals


class MBarriers:
    """The mbarriers of one nvgpu.mbarrier.create (one thread block)."""

    def __init__(self, count):
        self.count = [None] * count
        self.phase = [0] * count
        self.pending = [0] * count
        self.tx = [0] * count
        self.copies = [[] for _ in range(count)]  # in flight, issue order

    def check(self, i):
        if not 0 <= i < len(self.count):
            raise TmaError(f"mbarrier index {i} out of range")
        if self.count[i] is None:
            raise TmaError(f"mbarrier {i} used before mbarrier.init")

    def init(self, i, count):
        if not 0 <= i < len(self.count):
            raise TmaError(f"mbarrier index {i} out of range")
        if self.copies[i]:
            raise TmaError("mbarrier.init with copies in flight")
        self.count[i], self.phase[i] = count, 0
        self.pending[i], self.tx[i] = count, 0

    def arrive_expect_tx(self, i, tx, arrivals):
        self.check(i)
        self.tx[i] += tx * arrivals
        self.pending[i] -= arrivals
        if self.pending[i] < 0:
            raise TmaError("mbarrier: more arrivals than its count")
        self.maybe_complete(i)

    def attach(self, i, nbytes, land):
        """A TMA copy signalling mbarrier i; land() writes it."""
        self.check(i)
        self.copies[i].append((nbytes, land))

    def maybe_complete(self, i):
        if self.pending[i] == 0 and self.tx[i] == 0:
            self.phase[i] += 1
            self.pending[i] = self.count[i]

    def complete_one(self, i):
        nbytes, land = self.copies[i].pop(0)
        land()
        self.tx[i] -= nbytes
        if self.tx[i] < 0:
            raise TmaError("mbarrier tx-count below zero: the copies "
                           "completed more bytes than expect_tx announced")
        self.maybe_complete(i)

    def wait_parity(self, i, parity):
        """try_wait.parity until the phase of `parity` completed, landing
        the barrier's in-flight copies one by one as needed."""
        self.check(i)
        while self.phase[i] % 2 == parity:
            if not self.copies[i]:
                raise DeadlockError(
                    f"mbarrier.try_wait.parity {parity} on mbarrier {i} "
                    f"never returns (phase {self.phase[i]}: "
                    f"{self.pending[i]} arrivals and {self.tx[i]} "
                    "transaction bytes pending, no copy in flight)")
            self.complete_one(i)

    def idle(self):
        """Whether no copy is in flight (at the end of a block)."""
        return not any(self.copies)
