// normcheck::f16_bits (normcheck/float_format.h) against the compiler's _Float16 (GCC on x86-64): every f16
// value widened, and floats at and around every f16 rounding boundary (each
// value, each midpoint between neighbours, one float ulp either side),
// the overflow threshold, the subnormal range and the specials, narrowed.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "normcheck/float_format.h"

#if defined(__FLT16_MAX__)
namespace normcheck {
namespace {

uint16_t hw_from(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
float hw_to(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }

void expect_same_narrowing(float f) {
  const uint16_t mine = f16_bits::from_float(f), theirs = hw_from(f);
  if (std::isnan(f)) {
    EXPECT_TRUE((mine & 0x7c00) == 0x7c00 && (mine & 0x3ff)) << std::hexfloat << f;
  } else {
    EXPECT_EQ(mine, theirs) << std::hexfloat << f;
  }
}

TEST(F16Bits, EveryF16WidensAsTheHardwareDoes) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float mine = f16_bits::to_float(static_cast<uint16_t>(h));
    const float theirs = hw_to(static_cast<uint16_t>(h));
    if (std::isnan(theirs)) {
      EXPECT_TRUE(std::isnan(mine)) << h;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(mine), std::bit_cast<uint32_t>(theirs)) << h;
    }
  }
}

TEST(F16Bits, NarrowingRoundsAsTheHardwareDoes) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // every finite non-negative f16 and the gap to the next
    const float v = hw_to(static_cast<uint16_t>(h));
    const float next = h + 1 < 0x7c00 ? hw_to(static_cast<uint16_t>(h + 1)) : 65520.0f;
    const float mid = static_cast<float>((static_cast<double>(v) + next) / 2);  // exact in float
    for (float f : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), std::nextafter(v, INFINITY)}) {
      expect_same_narrowing(f);
      expect_same_narrowing(-f);
    }
  }
  for (float f : {0.0f, 0x1p-149f, 0x1p-126f, 0x1p-26f, 0x1p-25f, 0x1.000002p-25f, 65504.0f, 65519.99f, 65520.0f,
                  1e30f, std::numeric_limits<float>::max(), INFINITY, NAN})
    expect_same_narrowing(f), expect_same_narrowing(-f);
}

}  // namespace
}  // namespace normcheck
#endif
