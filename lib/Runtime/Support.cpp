//===- Support.cpp - attnrt internal helpers ------------------------------===//

#include "Support.h"

#include "attnc/Runtime/TensorIO.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace attnrt {

bool numElements(const std::vector<int64_t> &dims, uint64_t &out) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return false;
    uint64_t ud = static_cast<uint64_t>(d);
    if (ud != 0 && n > UINT64_MAX / ud)
      return false;
    n *= ud;
  }
  out = n;
  return true;
}

/// "768, 512".
static std::string joinDims(const std::vector<int64_t> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += dims[i] == kDynamicDim ? std::string("?") : std::to_string(dims[i]);
  }
  return s;
}

std::string formatShapeList(const std::vector<int64_t> &dims) {
  return "[" + joinDims(dims) + "]";
}

std::string formatShapeTuple(const std::vector<int64_t> &dims) {
  return "(" + joinDims(dims) + (dims.size() == 1 ? ",)" : ")");
}

bool parseDecimal(const std::string &s, uint64_t limit, uint64_t &out) {
  if (s.empty())
    return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

std::string strFormat(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s;
  if (n > 0) {
    s.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(&s[0], s.size(), fmt, ap2);
    s.resize(static_cast<size_t>(n));
  }
  va_end(ap2);
  return s;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      // Subnormal: renormalize.
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t exp = (bits >> 23) & 0xffu;
  uint32_t mant = bits & 0x7fffffu;
  if (exp == 0xff) // Inf or NaN (kept quiet).
    return sign | 0x7c00u | (mant ? 0x200u : 0u);
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00u;
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa into place.
    if (e < -10)
      return sign;
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  // A carry out of the mantissa bumps the exponent (up to infinity).
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  // Both results and a select, without a branch, so that convertFloats'
  // loop vectorizes. A NaN is kept quiet.
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  uint32_t quiet = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet
                                                                  : rounded);
}

/// out[i] = convert(in[i]) for `n` elements of unaligned buffers.
template <typename From, typename To, typename Convert>
static void convertEach(const unsigned char *in, unsigned char *out, uint64_t n,
                        Convert convert) {
  for (uint64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, in + sizeof(From) * i, sizeof(From));
    To r = convert(v);
    std::memcpy(out + sizeof(To) * i, &r, sizeof(To));
  }
}

void convertFloats(const void *src, DType from, void *dst, DType to,
                   uint64_t n) {
  if (from == to && dtypeSize(from) * n > 0) {
    std::memcpy(dst, src, dtypeSize(from) * n);
    return;
  }
  const unsigned char *in = static_cast<const unsigned char *>(src);
  unsigned char *out = static_cast<unsigned char *>(dst);
  // The conversions a bf16 build does at bind (an f32 checkpoint's every
  // weight) and back, as loops without a dtype switch per element, which
  // the compiler vectorizes.
  if (from == DType::F32 && to == DType::BF16)
    return convertEach<float, uint16_t>(in, out, n, floatToBf16);
  if (from == DType::BF16 && to == DType::F32)
    return convertEach<uint16_t, float>(in, out, n, bf16ToFloat);
  for (uint64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(elementAsDouble(in, from, i));
    if (to == DType::F32) {
      std::memcpy(out + 4 * i, &v, 4);
    } else {
      uint16_t h = to == DType::F16 ? floatToHalf(v) : floatToBf16(v);
      std::memcpy(out + 2 * i, &h, 2);
    }
  }
}

double elementAsDouble(const void *data, DType t, size_t i) {
  const unsigned char *p =
      static_cast<const unsigned char *>(data) + i * dtypeSize(t);
  switch (t) {
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return t == DType::F16 ? halfToFloat(v) : bf16ToFloat(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  }
  return 0;
}

AlignedBuffer::~AlignedBuffer() { reset(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&o) noexcept
    : ptr(o.ptr), bytes(o.bytes) {
  o.ptr = nullptr;
  o.bytes = 0;
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&o) noexcept {
  if (this != &o) {
    reset();
    ptr = o.ptr;
    bytes = o.bytes;
    o.ptr = nullptr;
    o.bytes = 0;
  }
  return *this;
}

/// `bytes` rounded up to whole pages; 0 on overflow. A last partial huge
/// page keeps small pages rather than growing the buffer by up to 2 MiB.
static size_t pageSpan(size_t bytes) {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t span = (bytes + page - 1) / page * page;
  return span < bytes ? 0 : span;
}

void *allocatePages(size_t bytes) {
  size_t span = pageSpan(bytes);
  if (!span || span + kHugePageBytes < span)
    return nullptr;
  if (span < kHugePageBytes) {
    void *m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? nullptr : m;
  }
  // mmap aligns to a page only: map one huge page more, trim both ends.
  size_t mapped = span + kHugePageBytes;
  void *m = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(m);
  uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start)
    ::munmap(m, aligned - start);
  size_t tail = start + mapped - (aligned + span);
  if (tail)
    ::munmap(reinterpret_cast<void *>(aligned + span), tail);
  void *p = reinterpret_cast<void *>(aligned);
#ifdef MADV_HUGEPAGE
  // Advice only: where transparent huge pages are off this fails harmlessly
  // and the buffer keeps 4 KiB pages.
  ::madvise(p, span, MADV_HUGEPAGE);
#endif
  return p;
}

void freePages(void *p, size_t bytes) {
  if (p)
    ::munmap(p, pageSpan(bytes));
}

/// What AlignedBuffer allocates for `n` bytes: at least one alignment unit,
/// whole units; 0 on overflow.
static size_t alignedBytes(size_t n) {
  size_t rounded = n < kAlignment ? kAlignment : n;
  if (rounded % kAlignment)
    rounded += kAlignment - rounded % kAlignment;
  return rounded < n ? 0 : rounded;
}

bool AlignedBuffer::allocate(size_t n) {
  reset();
  size_t rounded = alignedBytes(n);
  if (!rounded)
    return false;
  if (kLargeBuffersOnPages && rounded >= kMappedBytes) {
    // Anonymous pages are zero-filled already.
    ptr = allocatePages(rounded);
    if (!ptr)
      return false;
    bytes = n;
    return true;
  }
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    return false;
  std::memset(p, 0, rounded);
  ptr = p;
  bytes = n;
  return true;
}

void AlignedBuffer::reset() {
  if (kLargeBuffersOnPages && alignedBytes(bytes) >= kMappedBytes)
    freePages(ptr, alignedBytes(bytes));
  else
    std::free(ptr);
  ptr = nullptr;
  bytes = 0;
}

} // namespace attnrt
