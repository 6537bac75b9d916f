// normcheck/float_format.h: each format's constants against <limits> (float32),
// the compiler's _Float16 macros (f16) and the bits of the values themselves
// (every format), every 16-bit pattern through the conversions and back, the
// ties of every adjacent pair rounding to the even neighbour, and the ULP
// distance of every adjacent pair being one.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "normcheck/float_format.h"

namespace normcheck {
namespace {

using Limits = std::numeric_limits<float>;

static_assert(kFloat32Format.unit_roundoff() == Limits::epsilon() / 2);
static_assert(kFloat32Format.smallest_normal() == Limits::min());
static_assert(kFloat32Format.smallest_subnormal() == Limits::denorm_min());
static_assert(kFloat32Format.subnormal_spacing() == Limits::denorm_min());
static_assert(kFloat32Format.half_smallest_subnormal() == 0x1p-150);
static_assert(kFloat32Format.largest_finite() == Limits::max());
static_assert(kFloat32Format.storage_bytes() == 4 && kBf16Format.storage_bytes() == 2 &&
              kF16Format.storage_bytes() == 2);

TEST(FloatFormat, Float32MatchesLimits) {
  EXPECT_EQ(Limits::digits, kFloat32Format.precision);
  EXPECT_EQ(Limits::min_exponent - 1, kFloat32Format.min_exp);
  EXPECT_EQ(Limits::max_exponent - 1, kFloat32Format.max_exp);
  EXPECT_EQ(unit_roundoff(DType::f32), 0x1p-24);
  EXPECT_EQ(largest_finite(DType::f32), Limits::max());
}

TEST(FloatFormat, KnownValues) {
  EXPECT_EQ(unit_roundoff(DType::bf16), 0x1p-8);
  EXPECT_EQ(half_smallest_subnormal(DType::bf16), 0x1p-134);
  EXPECT_EQ(kBf16Format.smallest_normal(), 0x1p-126);
  EXPECT_EQ(largest_finite(DType::bf16), 0x1.fep127);
  EXPECT_EQ(unit_roundoff(DType::f16), 0x1p-11);
  EXPECT_EQ(half_smallest_subnormal(DType::f16), 0x1p-25);
  EXPECT_EQ(kF16Format.smallest_subnormal(), 0x1p-24);
  EXPECT_EQ(kF16Format.smallest_normal(), 0x1p-14);
  EXPECT_EQ(largest_finite(DType::f16), 65504.0);
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 rounding (not this header's conversions) at the
// places the constants describe: 1 + u is the tie above 1, half the smallest
// subnormal the tie above 0, largest + half its ulp the tie to infinity.
float hw_f16(float f) { return static_cast<float>(static_cast<_Float16>(f)); }

TEST(FloatFormat, F16ConstantsAreWhereTheCompilersFloat16Rounds) {
  const float u = static_cast<float>(kF16Format.unit_roundoff());
  EXPECT_EQ(hw_f16(1 + u), 1.0f);
  EXPECT_EQ(hw_f16(std::nextafter(1 + u, 2.0f)), 1 + 2 * u);
  const float half_tiny = static_cast<float>(kF16Format.half_smallest_subnormal());
  EXPECT_EQ(hw_f16(half_tiny), 0.0f);
  EXPECT_EQ(hw_f16(std::nextafter(half_tiny, 1.0f)), static_cast<float>(kF16Format.smallest_subnormal()));
  const float normal = static_cast<float>(kF16Format.smallest_normal());
  const float spacing = static_cast<float>(kF16Format.subnormal_spacing());
  EXPECT_EQ(hw_f16(normal - spacing), normal - spacing);  // the largest subnormal, one spacing below
  EXPECT_EQ(hw_f16(normal - spacing / 2), normal);        // the tie between them goes to the even 2^-14
  EXPECT_EQ(hw_f16(std::nextafter(normal - spacing / 2, 0.0f)), normal - spacing);
  const float top = static_cast<float>(kF16Format.largest_finite());
  EXPECT_EQ(hw_f16(top), top);
  EXPECT_EQ(hw_f16(top + 16), INFINITY);  // half the top binade's spacing 32: the tie goes to infinity
  EXPECT_EQ(hw_f16(std::nextafter(top + 16, 0.0f)), top);
}
#endif

// The constants read off the bit patterns: largest finite = exponent field
// one below all ones with a full significand, smallest normal = exponent 1,
// smallest subnormal = the last significand bit alone.
TEST(FloatFormat, ConstantsAreTheValuesOfTheirBitPatterns) {
  EXPECT_EQ(float_from_bf16(0x7f7f), largest_finite(DType::bf16));
  EXPECT_EQ(float_from_bf16(0x0080), kBf16Format.smallest_normal());
  EXPECT_EQ(float_from_bf16(0x0001), kBf16Format.smallest_subnormal());
  EXPECT_EQ(float_from_f16(0x7bff), largest_finite(DType::f16));
  EXPECT_EQ(float_from_f16(0x0400), kF16Format.smallest_normal());
  EXPECT_EQ(float_from_f16(0x0001), kF16Format.smallest_subnormal());
  // one ulp above 1 is 2u
  EXPECT_EQ(float_from_bf16(0x3f81) - 1.0, 2 * unit_roundoff(DType::bf16));
  EXPECT_EQ(float_from_f16(0x3c01) - 1.0, 2 * unit_roundoff(DType::f16));
}

bool is_nan_bits(DType t, uint16_t h) {
  const uint16_t exponent = t == DType::bf16 ? 0x7f80 : 0x7c00;
  return (h & exponent) == exponent && (h & ~exponent & 0x7fff) != 0;
}

uint16_t quiet_bit(DType t) { return t == DType::bf16 ? 0x40 : 0x200; }

// Widening is exact and narrowing the widened value gives the same bits back,
// -0 and both infinities included; a NaN stays a NaN, a quiet one unchanged.
TEST(FloatFormat, EverySixteenBitPatternRoundTrips) {
  for (DType t : {DType::bf16, DType::f16}) {
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const auto h = static_cast<uint16_t>(bits);
      const float f = from_16(t, h);
      const uint16_t back = to_16(t, f);
      if (is_nan_bits(t, h)) {
        ASSERT_TRUE(std::isnan(f)) << to_string(t) << " " << bits;
        ASSERT_TRUE(is_nan_bits(t, back)) << to_string(t) << " " << bits;
        if (h & quiet_bit(t)) {
          ASSERT_EQ(back, h) << to_string(t) << " " << bits;
        }
      } else {
        ASSERT_FALSE(std::isnan(f)) << to_string(t) << " " << bits;
        ASSERT_EQ(back, h) << to_string(t) << " " << bits;
      }
    }
  }
}

// Between adjacent finite values a and b of the format (b the next up), the
// midpoint (exact in float: 16-bit significands are shorter) rounds to the
// one with the even last bit, and a float either side of it to the nearer;
// the midpoint past the largest finite value rounds to infinity. The
// conversions and round_to_format agree on each.
TEST(FloatFormat, NarrowingRoundsToNearestEven) {
  for (DType t : {DType::bf16, DType::f16}) {
    const uint16_t inf = t == DType::bf16 ? 0x7f80 : 0x7c00;
    for (uint16_t h = 0; h < inf; ++h) {
      const float a = from_16(t, h);
      const double b = h + 1 < inf ? static_cast<double>(from_16(t, static_cast<uint16_t>(h + 1)))
                                    : 2 * largest_finite(t) - from_16(t, static_cast<uint16_t>(inf - 2));
      const float mid = static_cast<float>((a + b) / 2);
      ASSERT_EQ(static_cast<double>(mid), (a + b) / 2) << to_string(t) << " " << h;
      const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : h;
      ASSERT_EQ(to_16(t, mid), even) << to_string(t) << " " << h;
      ASSERT_EQ(to_16(t, -mid), even | 0x8000) << to_string(t) << " " << h;
      ASSERT_EQ(to_16(t, std::nextafter(mid, 0.0f)), h) << to_string(t) << " " << h;
      ASSERT_EQ(to_16(t, std::nextafter(mid, INFINITY)), h + 1) << to_string(t) << " " << h;
      for (float v : {mid, -mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), a})
        ASSERT_TRUE(std::bit_cast<uint64_t>(round_to_format(t, v)) ==
                    std::bit_cast<uint64_t>(static_cast<double>(from_16(t, to_16(t, v)))))
            << to_string(t) << " " << v << ": round_to_format gives " << round_to_format(t, v);
    }
  }
}

// round_to_format(t, v) on doubles: NarrowingRoundsToNearestEven holds its
// 16-bit roundings to the conversions' at every midpoint and the floats next
// to it; here float32's at the midpoints of floats, the overflow boundary,
// and the 16-bit formats' subnormal ends.
TEST(FloatFormat, RoundToFormatIsTheConversionsRounding) {
  for (float f : {1.0f, 0x1p-149f, 0x1.fffffep127f, 0x1p-126f, 3.0f, -0x1.8p-140f}) {
    const double next = std::nextafter(f, INFINITY);
    const double mid = (static_cast<double>(f) + next) / 2;  // exact in double
    const float even = (std::bit_cast<uint32_t>(f) & 1) ? std::nextafter(f, INFINITY) : f;
    EXPECT_EQ(round_to_format(DType::f32, mid), static_cast<double>(even)) << f;
    EXPECT_EQ(round_to_format(DType::f32, mid), static_cast<double>(static_cast<float>(mid))) << f;
  }
  EXPECT_EQ(round_to_format(DType::f32, 0x1.ffffffp127), INFINITY);       // FLT_MAX's upper midpoint: to even, inf
  EXPECT_EQ(round_to_format(DType::f32, 0x1.fffffefp127), 0x1.fffffep127);  // below it
  EXPECT_EQ(round_to_format(DType::bf16, 0x1p-133), 0x1p-133);             // the smallest bf16 subnormal
  EXPECT_EQ(round_to_format(DType::bf16, 0x1p-134), 0.0);                  // half of it: to even, 0
  EXPECT_EQ(round_to_format(DType::bf16, 0x1.8p-134), 0x1p-133);
  EXPECT_EQ(round_to_format(DType::f16, 0x1p-26), 0.0);                    // below half the smallest f16 subnormal
  EXPECT_TRUE(std::signbit(round_to_format(DType::f16, -0x1p-26)));        // a zero keeps the sign
}

// Adjacent values of each format are one ULP apart in that format, the
// largest finite value one ULP from infinity's place, and +-0 zero apart.
TEST(FloatFormat, AdjacentValuesAreOneUlpApart) {
  for (DType t : {DType::bf16, DType::f16}) {
    const uint16_t inf = t == DType::bf16 ? 0x7f80 : 0x7c00;
    for (uint16_t h = 0; h < inf; ++h) {
      const float a = from_16(t, h);
      const float b = from_16(t, static_cast<uint16_t>(h + 1));
      if (h + 1 < inf) {
        ASSERT_EQ(ulp_error(t, a, static_cast<double>(b)), 1) << to_string(t) << " " << h;
        ASSERT_EQ(ulp_error(t, -b, -static_cast<double>(a)), 1) << to_string(t) << " " << h;
      }
    }
    const double top = largest_finite(t), gap = top - from_16(t, static_cast<uint16_t>(inf - 2));
    EXPECT_EQ(ulp_error(t, from_16(t, inf), top + gap), 0) << to_string(t);  // inf at one past the top
    EXPECT_EQ(ulp_error(t, static_cast<float>(top), top + gap), 1) << to_string(t);
    EXPECT_EQ(ulp_error(t, 0.0f, -0.0), 0) << to_string(t);
    EXPECT_EQ(ulp_error(t, 1.0f, 1 + unit_roundoff(t)), 0.5) << to_string(t);  // half an ulp at 1
  }
  EXPECT_EQ(ulp_error(DType::f32, 1.0f, 1 + 0x1p-24), 0.5);
  EXPECT_EQ(ulp_error(DType::f32, 1.0f, 1 + 0x1p-24), ulp_error(1.0f, 1 + 0x1p-24));
}

// spacing(t, v) is the gap from each value of the format to the next above it
// (every 16-bit value, and float32 at powers of two and beside them), taken at
// any v in [a, b); 0 gives the subnormal spacing, and beyond the largest
// finite value the top binade's spacing goes on.
TEST(FloatFormat, SpacingIsTheGapToTheNextValue) {
  for (DType t : {DType::bf16, DType::f16}) {
    const uint16_t inf = t == DType::bf16 ? 0x7f80 : 0x7c00;
    for (uint16_t h = 0; h + 1 < inf; ++h) {
      const double a = from_16(t, h), b = from_16(t, static_cast<uint16_t>(h + 1));
      ASSERT_EQ(spacing(t, a), b - a) << to_string(t) << " " << h;
      ASSERT_EQ(spacing(t, -std::nextafter(b, 0.0)), b - a) << to_string(t) << " " << h;
    }
    const double top = largest_finite(t), gap = top - from_16(t, static_cast<uint16_t>(inf - 2));
    EXPECT_EQ(spacing(t, 4 * top), gap) << to_string(t);
  }
  for (const float f : {0x1p-149f, 0x1p-127f, 0x1p-126f, 1.0f, 0x1.fffffep0f, 3.0f, 0x1p127f, 0x1.fffffep127f}) {
    const double next = f == 0x1.fffffep127f ? 0x1p128 : static_cast<double>(std::nextafter(f, INFINITY));
    EXPECT_EQ(spacing(DType::f32, f), next - f) << f;
  }
  EXPECT_EQ(spacing(DType::f32, 0.0), 0x1p-149);
  EXPECT_EQ(spacing(DType::f16, 0.0), 0x1p-24);
  EXPECT_EQ(spacing(DType::f32, 1e300), 0x1p104);
}

}  // namespace
}  // namespace normcheck
