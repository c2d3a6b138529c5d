//===- ModelAllocTest.cpp - the CPU models' heap --------------------------===//

#include "attnc/Runtime/attnrt_abi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

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

} // namespace
