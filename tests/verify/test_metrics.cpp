// The error metrics of metrics.h. Expected values are positions on the float
// line worked out by hand (consecutive floats are consecutive integers).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "normcheck/metrics.h"
#include "test_seed.h"

namespace normcheck {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFltMax = std::numeric_limits<float>::max();
constexpr float kMinSub = std::numeric_limits<float>::denorm_min();
constexpr float kMinNormal = std::numeric_limits<float>::min();
constexpr double kInfD = std::numeric_limits<double>::infinity();

float up(float f) { return std::nextafter(f, kInf); }

TEST(MetricsOrdinal, ConsecutiveFloatsAreConsecutiveIntegers) {
  // Across binade boundaries, the subnormal/normal boundary, zero and sign.
  const float starts[] = {1.0f, 2.0f, 0x1p-126f, 0x1p127f, -4.0f, -0x1p-126f, 0.0f, -kMinSub};
  for (float f : starts) {
    float a = std::nextafter(f, -kInf), b = f;
    for (int k = 0; k < 4; ++k, a = b, b = up(b)) {
      if (a == 0 && b == 0) continue;  // -0 -> +0 is not a step
      EXPECT_EQ(float_ordinal(b) - float_ordinal(a), 1) << a << " -> " << b;
    }
  }
  EXPECT_EQ(float_ordinal(0.0f), 0);
  EXPECT_EQ(float_ordinal(-0.0f), 0);
  EXPECT_EQ(float_ordinal(kMinSub), 1);
  EXPECT_EQ(float_ordinal(-kMinSub), -1);
  EXPECT_EQ(float_ordinal(kMinNormal), 1 << 23);  // 2^23 subnormals below it
  EXPECT_EQ(float_ordinal(kInf), float_ordinal(kFltMax) + 1);
  EXPECT_EQ(float_ordinal(-kInf), -float_ordinal(kInf));
}

TEST(MetricsUlpDistance, Rules) {
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0);
  EXPECT_EQ(ulp_distance(kNaN, kNaN), 0);
  EXPECT_EQ(ulp_distance(kNaN, 1.0f), kInfD);
  EXPECT_EQ(ulp_distance(1.0f, -kNaN), kInfD);
  EXPECT_EQ(ulp_distance(kInf, kInf), 0);
  EXPECT_EQ(ulp_distance(kInf, kFltMax), 1);
  EXPECT_EQ(ulp_distance(kMinSub, -kMinSub), 2);  // through zero, counted once
  EXPECT_EQ(ulp_distance(1.0f, 2.0f), 1 << 23);
  EXPECT_EQ(ulp_distance(up(1.0f), 1.0f), 1);
  EXPECT_EQ(ulp_distance(-kInf, kInf), 2.0 * float_ordinal(kInf));
}

TEST(MetricsUlpError, ExactValuesBetweenFloatsGiveFractions) {
  // 1 + 2^-25 lies a quarter of the way from 1 to 1 + 2^-23.
  EXPECT_EQ(ulp_error(1.0f, 1 + 0x1p-25), 0.25);
  EXPECT_EQ(ulp_error(up(1.0f), 1 + 0x1p-25), 0.75);
  EXPECT_EQ(ulp_error(2.0f, 1 + 0x1p-25), (1 << 23) - 0.25);
  // Below 1 the spacing halves to 2^-24: 1 - 2^-25 is half an ULP under 1.
  EXPECT_EQ(ulp_error(1.0f, 1 - 0x1p-25), 0.5);
  EXPECT_EQ(ulp_error(1.0f, 1 - 0x1p-26), 0.25);
  // Negative values mirror.
  EXPECT_EQ(ulp_error(-1.0f, -(1 + 0x1p-25)), 0.25);
  EXPECT_EQ(ulp_error(-up(1.0f), -(1 + 0x1p-25)), 0.75);
  // Subnormals: spacing 2^-149; across zero the line is continuous.
  EXPECT_EQ(ulp_error(0.0f, 0x1p-151), 0.25);
  EXPECT_EQ(ulp_error(-kMinSub, 0x1p-151), 1.25);
  EXPECT_EQ(ulp_error(-0.0f, 0.0), 0);
  EXPECT_EQ(ulp_error(0.0f, -0.0), 0);
  // Exactly representable: integer distances.
  EXPECT_EQ(ulp_error(1.0f, 1.0), 0);
  EXPECT_EQ(ulp_error(kMinNormal, double{kMinNormal} - 0x1p-149), 1);
}

TEST(MetricsUlpError, NonFiniteAndOverflow) {
  EXPECT_EQ(ulp_error(kNaN, std::nan("")), 0);
  EXPECT_EQ(ulp_error(kNaN, 1.0), kInfD);
  EXPECT_EQ(ulp_error(1.0f, std::nan("")), kInfD);
  EXPECT_EQ(ulp_error(kInf, kInfD), 0);
  EXPECT_EQ(ulp_error(-kInf, -kInfD), 0);
  EXPECT_EQ(ulp_error(kInf, -kInfD), kInfD);
  EXPECT_EQ(ulp_error(kFltMax, kInfD), kInfD);  // a true infinity is infinitely far
  // An exact value past FLT_MAX sits on the line at the top binade's spacing
  // 2^104, so inf (one step past FLT_MAX) is at FLT_MAX + 2^104.
  EXPECT_EQ(ulp_error(kInf, double{kFltMax} + 0x1p104), 0);
  EXPECT_EQ(ulp_error(kInf, double{kFltMax} + 0x1p103), 0.5);
  EXPECT_EQ(ulp_error(kFltMax, double{kFltMax} + 0x1p103), 0.5);
  EXPECT_EQ(ulp_error(kInf, double{kFltMax}), 1);
  EXPECT_EQ(ulp_error(kFltMax, 4.0 * kFltMax), (4.0 * kFltMax - kFltMax) / 0x1p104);
}

TEST(MetricsUlpError, AgreesWithUlpDistanceOnFloats) {
  const float values[] = {0.0f, kMinSub, 3 * kMinSub, kMinNormal, 0.1f, 1.0f, 3e30f, kFltMax};
  for (float a : values)
    for (float b : values) {
      EXPECT_EQ(ulp_error(a, b), ulp_distance(a, b)) << a << " " << b;
      EXPECT_EQ(ulp_error(-a, b), ulp_distance(-a, b)) << -a << " " << b;
    }
}

// Within one binade ulp_error takes |computed - exact| over the binade's
// spacing; the expected value here is the position on the float line
// counted from the float below the exact value: ordinals apart, less the
// exact value's fraction of its gap, in long double (64 bits: the fraction
// is a multiple of 2^-29 and the whole below 2^24, so every step is exact).
// Each binade of float's normal range, both signs, the binade past FLT_MAX.
TEST(MetricsUlpError, OneBinadeIsTheFloatLine) {
  std::mt19937_64 rng(test::fixed_seed(20261206));
  std::uniform_real_distribution<double> unit(1, 2);
  const auto line = [](float c, double e) {  // c and e of one sign, |e| < FLT_MAX
    const double a = std::fabs(e);
    float below = static_cast<float>(a);
    if (static_cast<double>(below) > a) below = std::nextafter(below, 0.0f);
    const long double gap = static_cast<long double>(std::nextafter(below, kInf)) - below;
    const long double position =
        static_cast<long double>(float_ordinal(std::fabs(c)) - float_ordinal(below)) - (a - below) / gap;
    return static_cast<double>(std::fabs(position));
  };
  for (int k = -126; k <= 127; ++k)
    for (int n = 0; n < 64; ++n) {
      const double e = std::ldexp(unit(rng), k);
      // a float of the same binade near e (a few of its spacings away), or anywhere in the binade
      const float near = static_cast<float>(e), far = static_cast<float>(std::ldexp(unit(rng), k));
      for (float c : {near, std::nextafter(near, kInf), std::nextafter(near, 0.0f), far}) {
        if (std::ilogb(c) != k || e >= kFltMax) continue;
        EXPECT_EQ(ulp_error(c, e), line(c, e)) << c << " " << e;
        EXPECT_EQ(ulp_error(-c, -e), line(c, e)) << -c << " " << -e;
        EXPECT_EQ(ulp_error(DType::bf16, c, e), line(c, e) / 0x1p16) << c << " " << e;
      }
    }
  // past FLT_MAX the line goes on at the top binade's spacing, 2^104
  EXPECT_EQ(ulp_error(kFltMax, static_cast<double>(kFltMax) + 0x1p102), 0.25);
  EXPECT_EQ(ulp_error(std::nextafter(kFltMax, 0.0f), static_cast<double>(kFltMax) + 0x1p103), 1.5);
}

// scaled_ulp_error: the ULP distance where |exact| is at least the scale;
// below it the error in ULPs of the scale, never more than the ULP distance.
TEST(MetricsScaledUlp, UlpsOfTheScaleBelowIt) {
  // at or above the scale: the ULP distance, in each format
  EXPECT_EQ(scaled_ulp_error(DType::f32, up(1.0f), 1.0, 1.0), 1);
  EXPECT_EQ(scaled_ulp_error(DType::f32, up(4.0f), 4.0, 1.0), 1);
  EXPECT_EQ(scaled_ulp_error(DType::bf16, 1.0078125f, 1.0, 0.5), 1);  // bf16: spacing 2^-7 at 1
  // below: an element at 2^-20 off by 2^-30 is 2^-30 / 2^-43 = 8192 of its
  // own ULPs, and 2^-30 / 2^-23 = 2^-7 ULP of the scale 1
  EXPECT_EQ(ulp_error(DType::f32, 0x1p-20f + 0x1p-30f, 0x1p-20), 0x1p13);
  EXPECT_EQ(scaled_ulp_error(DType::f32, 0x1p-20f + 0x1p-30f, 0x1p-20, 1.0), 0x1p-7);
  EXPECT_EQ(scaled_ulp_error(DType::f32, 0x1p-20f + 0x1p-30f, 0x1p-20, 0x1p-10), 0x1p3);
  // exact 0: measured at the scale, not counted over every float down to 0
  EXPECT_EQ(ulp_error(DType::f32, 0x1p-40f, 0.0), 87 << 23);  // 2^-40's bits: exponent field 87
  EXPECT_EQ(scaled_ulp_error(DType::f32, 0x1p-40f, 0.0, 1.0), 0x1p-17);
  EXPECT_EQ(scaled_ulp_error(DType::f16, 0x1p-20f, 0.0, 1.0), 0x1p-10);  // f16 spacing at 1 is 2^-10
  // a scale that is 0 or NaN leaves the ULP distance
  EXPECT_EQ(scaled_ulp_error(DType::f32, 0x1p-40f, 0.0, 0.0), 87 << 23);
  EXPECT_EQ(scaled_ulp_error(DType::f32, 0x1p-40f, 0.0, std::nan("")), 87 << 23);
}

TEST(MetricsNormwise, Rules) {
  const std::vector<float> c = {1, 2, 2};
  const std::vector<double> e = {1, 2, 2.5};  // ||c - e|| = 0.5, ||e|| = sqrt(1 + 4 + 6.25)
  EXPECT_DOUBLE_EQ(normwise_error(c, e), 0.5 / std::sqrt(11.25));
  EXPECT_EQ(normwise_error(std::vector<float>{0, 0}, std::vector<double>{0, 0}), 0);  // 0/0
  EXPECT_EQ(normwise_error(std::vector<float>{1, 0}, std::vector<double>{0, 0}), kInfD);
  // NaN on both sides is agreement and skipped; on one side it is infinite error.
  EXPECT_DOUBLE_EQ(normwise_error(std::vector<float>{kNaN, 1, 2, 2}, std::vector<double>{NAN, 1, 2, 2.5}),
                   0.5 / std::sqrt(11.25));
  EXPECT_EQ(normwise_error(std::vector<float>{kNaN, 1}, std::vector<double>{1, 1}), kInfD);
  EXPECT_EQ(normwise_error(std::vector<float>{1, 1}, std::vector<double>{NAN, 1}), kInfD);
  EXPECT_EQ(normwise_error(std::vector<float>{kInf, 1}, std::vector<double>{INFINITY, 1}), 0);
  EXPECT_EQ(normwise_error(std::vector<float>{kInf, 1}, std::vector<double>{1e300, 1}), kInfD);
  EXPECT_THROW(normwise_error(std::vector<float>{1}, std::vector<double>{1, 2}),
               std::invalid_argument);
}

// Exact values far beyond the float range (dx reaches ~2^400) and tiny ones
// must neither overflow nor underflow the norms.
TEST(MetricsNormwise, ScalesWithoutOverflow) {
  const std::vector<float> big_c = {kFltMax, kFltMax};
  const std::vector<double> big_e = {0x1p400, 0x1p400};
  EXPECT_NEAR(normwise_error(big_c, big_e), 1.0, 0x1p-50);
  const std::vector<float> tiny_c = {2 * kMinSub, 0};
  const std::vector<double> tiny_e = {kMinSub, 0};
  EXPECT_EQ(normwise_error(tiny_c, tiny_e), 1.0);
}

// The figure in long double from its definition, ||c - e|| / ||e||, on rows
// of every length around the partial sums' count (8) and many lengths past
// it: normwise_error's vector loops and its partial sums give the ratio of
// norms to within a few n u, whatever the length; and a non-finite element
// is found at every position, in a partial sum's every lane and in the tail.
TEST(MetricsNormwise, IsTheRatioOfNormsAtEveryLength) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  for (std::size_t n = 1; n <= 70; ++n) {
    std::vector<float> c(n);
    std::vector<double> e(n);
    for (std::size_t i = 0; i < n; ++i) {
      e[i] = normal(rng);
      c[i] = static_cast<float>(e[i] * (1 + 1e-3 * normal(rng)));
    }
    long double diff = 0, norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      diff += (static_cast<long double>(c[i]) - e[i]) * (static_cast<long double>(c[i]) - e[i]);
      norm += static_cast<long double>(e[i]) * e[i];
    }
    const double want = static_cast<double>(std::sqrt(diff / norm));
    // a few double roundings per term and per partial sum: 8 n 2^-53 relative is ample
    EXPECT_NEAR(normwise_error(c, e), want, want * 8 * static_cast<double>(n) * 0x1p-53)
        << n << " (seed " << seed << ")";
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<float> bad = c;
      bad[at] = kNaN;
      EXPECT_EQ(normwise_error(bad, e), kInfD) << n << " " << at;
      bad[at] = kInf;
      EXPECT_EQ(normwise_error(bad, e), kInfD) << n << " " << at;
    }
  }
}

}  // namespace
}  // namespace normcheck
