//===- MemrefCopy.cpp - strided memref copies for compiled CPU code -------===//
//
// MLIR lowers `memref.copy` between memrefs whose layouts are not both the
// identity (e.g. a slice of a projection's output copied into a contiguous
// buffer) to a call `memrefCopy(elemSize, src, dst)` on unranked
// descriptors; upstream implements it in libmlir_c_runner_utils, which
// compiled models do not link. Same contract: equal shapes, any strides.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// MLIR's unranked memref: the rank and a pointer to the ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedDescriptor {
  int64_t rank;
  void *descriptor;
};

struct RankedView {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

RankedView view(const UnrankedDescriptor *m) {
  auto *fields = static_cast<char **>(m->descriptor);
  auto *ints = reinterpret_cast<const int64_t *>(fields + 2);
  return {fields[1], ints[0], ints + 1, ints + 1 + m->rank};
}
} // namespace

extern "C" void memrefCopy(int64_t elemSize, UnrankedDescriptor *src,
                           UnrankedDescriptor *dst) {
  int64_t rank = src->rank;
  RankedView s = view(src), d = view(dst);
  char *sp = s.aligned + s.offset * elemSize;
  char *dp = d.aligned + d.offset * elemSize;
  if (rank == 0) {
    std::memcpy(dp, sp, static_cast<size_t>(elemSize));
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (s.sizes[i] == 0)
      return;
  // Odometer over the indices; the innermost dimension is copied as a run
  // when both sides are contiguous along it.
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t inner = s.sizes[rank - 1];
  bool runs = s.strides[rank - 1] == 1 && d.strides[rank - 1] == 1;
  while (true) {
    if (runs) {
      std::memcpy(dp, sp, static_cast<size_t>(inner * elemSize));
    } else {
      for (int64_t k = 0; k < inner; ++k)
        std::memcpy(dp + k * d.strides[rank - 1] * elemSize,
                    sp + k * s.strides[rank - 1] * elemSize,
                    static_cast<size_t>(elemSize));
    }
    int64_t axis = rank - 2;
    for (; axis >= 0; --axis) {
      sp += s.strides[axis] * elemSize;
      dp += d.strides[axis] * elemSize;
      if (++index[static_cast<size_t>(axis)] < s.sizes[axis])
        break;
      sp -= s.strides[axis] * s.sizes[axis] * elemSize;
      dp -= d.strides[axis] * d.sizes[axis] * elemSize;
      index[static_cast<size_t>(axis)] = 0;
    }
    if (axis < 0)
      return;
  }
}
