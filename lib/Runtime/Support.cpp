//===- Support.cpp - attnrt internal helpers ------------------------------===//

#include "Support.h"

#include "attnc/Runtime/TensorIO.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

std::string formatShapeList(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string formatShapeTuple(const std::vector<int64_t> &dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1)
    s += ",";
  return s + ")";
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

bool AlignedBuffer::allocate(size_t n) {
  reset();
  size_t rounded = n < kAlignment ? kAlignment : n;
  if (rounded % kAlignment)
    rounded += kAlignment - rounded % kAlignment;
  if (rounded < n)
    return false;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    return false;
  std::memset(p, 0, rounded);
  ptr = p;
  bytes = n;
  return true;
}

void AlignedBuffer::reset() {
  std::free(ptr);
  ptr = nullptr;
  bytes = 0;
}

} // namespace attnrt
