//===- ModelAllocTest.cpp - the CPU models' heap --------------------------===//

#include "Support.h"

#include "attnc/Runtime/attnrt_abi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mman.h>

namespace {

bool alignedTo(void *p, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(ModelAllocTest, FreedBlocksAreReusedBySize) {
  void *a = _mlir_memref_to_llvm_alloc(3 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(alignedTo(a, 64));
  std::memset(a, 1, 3 << 20);
  _mlir_memref_to_llvm_free(a);
  // The same size (after rounding to 64 bytes) gets the cached block back;
  // another size does not.
  void *b = _mlir_memref_to_llvm_alloc((3 << 20) - 10);
  EXPECT_EQ(a, b);
  void *c = _mlir_memref_to_llvm_alloc(1 << 20);
  EXPECT_NE(c, b);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST(ModelAllocTest, AlignedAndEmpty) {
  void *p = _mlir_memref_to_llvm_aligned_alloc(4096, 100);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(alignedTo(p, 4096));
  void *q = _mlir_memref_to_llvm_alloc(0);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(q);
  // A 4096-aligned block is not handed out for a 64-aligned request.
  void *r = _mlir_memref_to_llvm_alloc(4096);
  EXPECT_NE(r, p);
  EXPECT_TRUE(alignedTo(r, 64));
  _mlir_memref_to_llvm_free(r);
}

/// The smaps record of the mapping that holds `p`: its `field` value (for
/// example "THPeligible"), or "" when not found.
std::string smapsField(const void *p, const std::string &field) {
  std::ifstream smaps("/proc/self/smaps");
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo, hi;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) {
      std::string v = line.substr(field.size() + 1);
      return v.substr(v.find_first_not_of(' '));
    }
  }
  return "";
}

/// Whether large blocks are advised for huge pages here: by the runtime
/// (not under AddressSanitizer) to a kernel that grants them on advice.
bool hugePagesOnAdvice() {
  if (!attnrt::kLargeBuffersOnPages)
    return false;
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(f, mode);
  return mode.find("[always]") != std::string::npos ||
         mode.find("[madvise]") != std::string::npos;
}

TEST(ModelAllocTest, LargeBlocksTakeHugePages) {
  // Large blocks sit at the huge page boundary plus their alignment, which
  // holds the header; each is usable to its end, and zero-filled when new
  // where it comes from allocatePages.
  for (size_t alignment : {size_t(64), size_t(4096), size_t(1) << 21}) {
    size_t bytes = (5 << 20) + 3 * alignment;
    char *p = static_cast<char *>(
        _mlir_memref_to_llvm_aligned_alloc(alignment, bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(alignedTo(p, alignment));
    if (attnrt::kLargeBuffersOnPages) {
      EXPECT_EQ(p[0], 0);
      EXPECT_EQ(p[bytes - 1], 0);
    }
    std::memset(p, 7, bytes);
    if (hugePagesOnAdvice()) {
      EXPECT_EQ(smapsField(p, "THPeligible"), "1") << alignment;
    }
    _mlir_memref_to_llvm_free(p);
  }
  // Blocks beyond what the cache keeps are unmapped; their pages are never
  // touched, so this costs address space only.
  size_t big = size_t(600) << 20;
  void *a = _mlir_memref_to_llvm_alloc(big);
  void *b = _mlir_memref_to_llvm_alloc(big);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  if (attnrt::kLargeBuffersOnPages) {
    EXPECT_EQ(smapsField(b, "Size"), "");
  }
  void *c = _mlir_memref_to_llvm_alloc(big);
  EXPECT_EQ(c, a);
  _mlir_memref_to_llvm_free(c);
}

TEST(ModelAllocTest, AllocatePagesAlignsAndZeroes) {
  for (size_t bytes :
       {attnrt::kHugePageBytes, attnrt::kHugePageBytes + 1, size_t(7) << 20}) {
    auto *p = static_cast<unsigned char *>(attnrt::allocatePages(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(alignedTo(p, attnrt::kHugePageBytes));
    EXPECT_EQ(p[0], 0);
    EXPECT_EQ(p[bytes - 1], 0);
    std::memset(p, 1, bytes);
    if (hugePagesOnAdvice()) {
      EXPECT_EQ(smapsField(p, "THPeligible"), "1") << bytes;
    }
    attnrt::freePages(p, bytes);
    EXPECT_EQ(smapsField(p, "Size"), "") << bytes;
  }
  // A size that overflows when rounded to whole huge pages.
  EXPECT_EQ(attnrt::allocatePages(SIZE_MAX - 5), nullptr);
}

TEST(ModelAllocTest, LargeAlignedBuffersAreZeroed) {
  attnrt::AlignedBuffer buffer;
  ASSERT_TRUE(buffer.allocate((3 << 20) + 5));
  auto *p = static_cast<unsigned char *>(buffer.data());
  EXPECT_TRUE(alignedTo(p, attnrt::kLargeBuffersOnPages ? attnrt::kHugePageBytes
                                                        : attnrt::kAlignment));
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[(3 << 20) + 4], 0);
  std::memset(p, 3, buffer.size());
  // Moved, then freed once by its new owner.
  attnrt::AlignedBuffer other = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(other.data(), p);
  other.reset();
  if (attnrt::kLargeBuffersOnPages) {
    EXPECT_EQ(smapsField(p, "Size"), "");
  }
  ASSERT_TRUE(other.allocate(100));
  EXPECT_TRUE(alignedTo(other.data(), 64));
}

TEST(ModelAllocTest, MidSizeAlignedBuffersAreFaultedInWhenTouched) {
  // A KV cache of one layer of GPT-2 at 256 positions (768 KiB): zero, and
  // only the pages written are resident.
  attnrt::AlignedBuffer buffer;
  ASSERT_TRUE(buffer.allocate(size_t(768) << 10));
  auto *p = static_cast<unsigned char *>(buffer.data());
  EXPECT_TRUE(alignedTo(p, 64));
  if (!attnrt::kLargeBuffersOnPages)
    return;
  EXPECT_TRUE(alignedTo(p, 4096));
  // Which of its pages are resident (mincore: the mapping's own pages,
  // whatever neighbours the kernel merges it with).
  auto resident = [&] {
    std::vector<unsigned char> pages((size_t(768) << 10) / 4096);
    EXPECT_EQ(mincore(p, size_t(768) << 10, pages.data()), 0);
    size_t n = 0;
    for (unsigned char page : pages)
      n += page & 1;
    return n;
  };
  EXPECT_EQ(resident(), 0u);
  std::memset(p, 5, 8192);
  EXPECT_EQ(resident(), 2u);
  EXPECT_EQ(p[(size_t(768) << 10) - 1], 0);
  buffer.reset();
  EXPECT_EQ(smapsField(p, "Size"), "");
}

} // namespace
