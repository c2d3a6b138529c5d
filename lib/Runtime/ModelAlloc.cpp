//===- ModelAlloc.cpp - the heap of compiled CPU models -------------------===//
//
// Models compiled for the CPU allocate their temporaries through MLIR's
// generic allocation functions (finalize-memref-to-llvm with
// use-generic-functions), defined here. Every run allocates the same
// buffers (a BERT layer: activations of a few MiB each) and frees them
// before returning; with plain malloc, glibc gives the top of the heap back
// to the kernel at each free and the next run page-faults it in again (zero
// filled), about a tenth of a BERT layer's latency. Freed blocks are kept
// here per (size, alignment) instead and handed out again on the next
// request of that size, so a model's working set stays mapped between
// runs, without changing how the rest of the process allocates. Large
// blocks take huge pages (allocatePages), as the weights do.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include "attnc/Runtime/attnrt_abi.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace {

/// Stored right before the pointer handed out.
struct BlockHeader {
  size_t bytes;  ///< Usable size (a multiple of the alignment).
  size_t offset; ///< From the start of the system allocation.
};

constexpr size_t kMinAlignment = 64;
/// Free blocks kept beyond this many bytes go back to the system.
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

struct BlockCache {
  std::mutex mutex;
  /// Free blocks by (usable size, offset); the offset is the alignment.
  std::map<std::pair<size_t, size_t>, std::vector<void *>> free;
  size_t cachedBytes = 0;
};

BlockCache &cache() {
  // Never destroyed: models may still free blocks during exit.
  static BlockCache *instance = new BlockCache;
  return *instance;
}

/// Whether a block of `bytes` after `offset` bytes of padding comes from
/// allocatePages (mapped at a huge page boundary, which any smaller
/// alignment divides).
bool fromPages(size_t offset, size_t bytes) {
  return attnrt::kLargeBuffersOnPages &&
         offset + bytes >= attnrt::kHugePageBytes &&
         offset <= attnrt::kHugePageBytes;
}

BlockHeader *headerOf(void *p) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(p) -
                                         sizeof(BlockHeader));
}

void *allocate(size_t alignment, size_t size) {
  if (alignment < kMinAlignment)
    alignment = kMinAlignment;
  // The header sits in the alignment padding before the block.
  size_t offset = alignment;
  size_t bytes =
      size == 0 ? alignment : (size + alignment - 1) & ~(alignment - 1);
  BlockCache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free.find({bytes, offset});
    if (it != c.free.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      c.cachedBytes -= bytes;
      return p;
    }
  }
  if (offset + bytes < bytes)
    return nullptr;
  char *base = static_cast<char *>(
      fromPages(offset, bytes) ? attnrt::allocatePages(offset + bytes)
                               : std::aligned_alloc(alignment, offset + bytes));
  if (!base)
    return nullptr;
  void *p = base + offset;
  *headerOf(p) = BlockHeader{bytes, offset};
  return p;
}

} // namespace

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return allocate(kMinAlignment, size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  return allocate(alignment, size);
}

void _mlir_memref_to_llvm_free(void *p) {
  if (!p)
    return;
  BlockHeader header = *headerOf(p);
  BlockCache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.cachedBytes + header.bytes <= kMaxCachedBytes) {
      c.free[{header.bytes, header.offset}].push_back(p);
      c.cachedBytes += header.bytes;
      return;
    }
  }
  char *base = static_cast<char *>(p) - header.offset;
  if (fromPages(header.offset, header.bytes))
    attnrt::freePages(base, header.offset + header.bytes);
  else
    std::free(base);
}
