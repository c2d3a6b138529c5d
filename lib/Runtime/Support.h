//===- Support.h - attnrt internal helpers ----------------------*- C++ -*-===//
//
// Small shared pieces of the runtime: shape formatting, aligned buffers,
// half/bfloat16 conversion. Plain C++17, no LLVM. The dtypes are in the
// manifest schema, which the compiler shares.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_SUPPORT_H
#define ATTNC_LIB_RUNTIME_SUPPORT_H

#include "attnc/Runtime/ManifestSchema.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnrt {

/// Product of dims with overflow checking (false on overflow or a negative
/// dim). A rank-0 shape has one element.
bool numElements(const std::vector<int64_t> &dims, uint64_t &out);

/// "[768, 512]" (the safetensors / error-message style).
std::string formatShapeList(const std::vector<int64_t> &dims);
/// "(1, 32)", "(5,)", "()" (the numpy style).
std::string formatShapeTuple(const std::vector<int64_t> &dims);

/// Parses a non-empty string of decimal digits (no sign, no spaces) whose
/// value is at most `limit`.
bool parseDecimal(const std::string &s, uint64_t limit, uint64_t &out);

/// printf into a std::string.
std::string strFormat(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

float halfToFloat(uint16_t h);
float bf16ToFloat(uint16_t h);
/// Round to nearest even; overflow gives infinity, NaN stays NaN.
uint16_t floatToHalf(float f);
uint16_t floatToBf16(float f);
/// Converts `n` elements between float dtypes (f32, f16, bf16).
void convertFloats(const void *src, DType from, void *dst, DType to,
                   uint64_t n);

/// Buffers of at least this many bytes come from allocatePages at a 2 MiB
/// boundary, advised for transparent huge pages.
constexpr size_t kHugePageBytes = size_t(2) << 20;
/// AlignedBuffers of at least this many bytes come from allocatePages: the
/// kernel's zero pages, faulted in when first written, so that a buffer no
/// run writes (the state of a model's default context when only sessions
/// run it) costs no memory.
constexpr size_t kMappedBytes = size_t(64) << 10;

/// Whether large buffers come from allocatePages. Not under AddressSanitizer,
/// which checks the bounds of heap blocks but not of pages mapped directly.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLargeBuffersOnPages = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLargeBuffersOnPages = false;
#else
constexpr bool kLargeBuffersOnPages = true;
#endif
#else
constexpr bool kLargeBuffersOnPages = true;
#endif

/// Zero-filled memory for a large, long-lived buffer (weights laid out at
/// bind, a model's activations, KV caches): pages mapped from the kernel,
/// from kHugePageBytes on at a 2 MiB boundary and advised for transparent
/// huge pages. A decode step streams every weight once; with a TLB miss
/// every 4 KiB, GPT-2's memory-bound GEMVs took about 1.35x as long.
/// nullptr if out of memory. freePages takes the same `bytes`.
void *allocatePages(size_t bytes);
void freePages(void *p, size_t bytes);

/// A 64-byte aligned, zero-filled heap buffer (at least 64 bytes are
/// allocated so that a zero-sized tensor still has a valid, unique
/// pointer); from kMappedBytes on, it comes from allocatePages.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  AlignedBuffer(AlignedBuffer &&o) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&o) noexcept;

  /// Allocates `bytes` zero-initialized bytes; false if out of memory.
  bool allocate(size_t bytes);
  void reset();
  void *data() const { return ptr; }
  size_t size() const { return bytes; }

private:
  void *ptr = nullptr;
  size_t bytes = 0;
};

constexpr size_t kAlignment = 64;

} // namespace attnrt

#endif // ATTNC_LIB_RUNTIME_SUPPORT_H
