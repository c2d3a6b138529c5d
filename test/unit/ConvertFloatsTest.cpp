//===- ConvertFloatsTest.cpp - float conversions at bind ------------------===//
//
// convertFloats against references that do not share its arithmetic: the
// nearer of the two bf16 neighbours, compared in double.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using attnrt::convertFloats;
using attnrt::DType;

/// The bf16 of a non-NaN f32 by its definition: of the two bf16 values
/// around it (the high half, and the next one up in magnitude), the nearer,
/// the even one at a tie; beyond the largest bf16 by half a step or more,
/// infinity.
uint16_t referenceBf16(uint32_t bits) {
  uint32_t sign = bits & 0x80000000u, magnitude = bits & 0x7fffffffu;
  uint32_t down = magnitude >> 16;
  auto valueOf = [](uint32_t high) {
    // 0x7f80 is infinity; as the upper neighbour of the largest bf16 it
    // stands for 2^128, where the exponent would go on.
    if (high == 0x7f80u)
      return std::ldexp(1.0, 128);
    uint32_t b = high << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return static_cast<double>(f);
  };
  float f;
  std::memcpy(&f, &magnitude, 4);
  double x = f, below = valueOf(down);
  uint32_t chosen = down;
  if (x != below) {
    double above = valueOf(down + 1);
    double toBelow = x - below, toAbove = above - x;
    if (toAbove < toBelow || (toAbove == toBelow && (down & 1u)))
      chosen = down + 1;
  }
  return static_cast<uint16_t>((sign >> 16) | chosen);
}

TEST(ConvertFloatsTest, F32ToBf16RoundsToNearestEven) {
  // Every high half, each with low halves around the rounding boundary:
  // exact, just above, just below half, half (a tie), just above half, and
  // the most; every sign, exponent and payload, infinities and NaNs.
  std::vector<uint32_t> bits;
  for (uint32_t high = 0; high < 0x10000u; ++high)
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      bits.push_back(high << 16 | low);
  std::vector<uint16_t> out(bits.size());
  convertFloats(bits.data(), DType::F32, out.data(), DType::BF16, bits.size());
  size_t wrong = 0;
  for (size_t i = 0; i < bits.size(); ++i) {
    uint32_t b = bits[i];
    bool nan = (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu);
    // A NaN keeps its sign and high payload, made quiet.
    uint16_t want =
        nan ? static_cast<uint16_t>((b >> 16) | 0x40u) : referenceBf16(b);
    if (out[i] != want && wrong++ < 8)
      ADD_FAILURE() << std::hex << "f32 0x" << b << ": got 0x" << out[i]
                    << ", want 0x" << want;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(ConvertFloatsTest, Bf16ToF32IsExact) {
  std::vector<uint16_t> halves(0x10000);
  for (uint32_t h = 0; h < 0x10000u; ++h)
    halves[h] = static_cast<uint16_t>(h);
  std::vector<uint32_t> out(halves.size());
  convertFloats(halves.data(), DType::BF16, out.data(), DType::F32,
                halves.size());
  for (uint32_t h = 0; h < 0x10000u; ++h)
    ASSERT_EQ(out[h], h << 16) << std::hex << "bf16 0x" << h;
  // And back: every bf16 value is an f32 that rounds to itself.
  std::vector<uint16_t> back(halves.size());
  convertFloats(out.data(), DType::F32, back.data(), DType::BF16, out.size());
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    bool nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
    ASSERT_EQ(back[h], nan ? (h | 0x40u) : h) << std::hex << "bf16 0x" << h;
  }
}

} // namespace
