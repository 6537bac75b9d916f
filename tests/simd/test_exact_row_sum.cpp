// ExactRowSum: d x - S for rows of floats against GMP's exact integers (every
// float is an integer multiple of 2^-149), within the 2^-51.99 relative its
// header promises. Rows: random magnitudes over the whole float range with
// both signs, subnormals, exact cancellation down to one tiny survivor, more
// than 64 additions between carry passes, counts up to 2^39. The negative
// control is a float64 running sum, which the same check rejects.
#include <gmp.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../support/test_seed.h"
#include "simd/exact_row_sum.h"

namespace normcheck {
namespace {

// The header's promise: relative error below 2^-51.99 (two roundings of the
// leading 96 bits and the truncated tail, proof in exact_row_sum.cpp).
constexpr double kAllowedRelative = 0x1.0060p-52;

// x * 2^149 as an exact integer.
void set_scaled(mpz_t out, float x) {
  mpz_set_d(out, std::ldexp(static_cast<double>(x), 149));  // exact: an integer below 2^277
}

// The relative error of `computed` against count * x - sum(row), exactly.
double relative_error(double computed, const std::vector<float>& row, float x, int64_t count) {
  mpz_t exact, term, scaled_computed;
  mpz_inits(exact, term, scaled_computed, nullptr);
  set_scaled(exact, x);
  mpz_mul_si(exact, exact, count);
  for (const float v : row) {
    set_scaled(term, v);
    mpz_sub(exact, exact, term);
  }
  double error;
  if (mpz_sgn(exact) == 0) {
    error = computed == 0 ? 0 : std::numeric_limits<double>::infinity();
  } else {
    // computed * 2^149 is an integer too when computed is a multiple of
    // 2^-149, as every float sum is (if not, that is an error in itself):
    // compare the integers exactly, then the ratio in double.
    const double scaled = std::ldexp(computed, 149);
    if (std::trunc(scaled) != scaled) {
      error = std::numeric_limits<double>::infinity();
    } else {
      mpz_set_d(scaled_computed, scaled);
      mpz_sub(term, scaled_computed, exact);
      long exponent_error = 0, exponent_exact = 0;
      const double error_mantissa = mpz_get_d_2exp(&exponent_error, term);
      const double exact_mantissa = mpz_get_d_2exp(&exponent_exact, exact);
      error = std::abs(std::ldexp(error_mantissa / exact_mantissa,
                                  static_cast<int>(exponent_error - exponent_exact)));
    }
  }
  mpz_clears(exact, term, scaled_computed, nullptr);
  return error;
}

double exact_tier_error(const std::vector<float>& row, float x, int64_t count) {
  simd::ExactRowSum sum;
  for (const float v : row) sum.add(v);
  return relative_error(sum.scaled_deviation(x, count), row, x, count);
}

float random_float(std::mt19937_64& rng) {
  // Any finite float, by bits: every exponent alike, subnormals included.
  for (;;) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isfinite(f)) return f;
  }
}

TEST(ExactRowSum, WholeFloatRange) {
  std::mt19937_64 rng(test::test_seed());
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> row(1 + rng() % 300);
    for (float& v : row) v = random_float(rng);
    const float x = row[rng() % row.size()];
    for (const int64_t count : {static_cast<int64_t>(row.size()), int64_t{1}, int64_t{1} << 39})
      ASSERT_LE(exact_tier_error(row, x, count), kAllowedRelative) << "trial " << trial;
  }
}

// Pairs +-a cancel exactly; what survives is one tiny value and d x.
TEST(ExactRowSum, CancellationToATinySurvivor) {
  std::mt19937_64 rng(test::test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> row;
    for (int i = 0; i < 500; ++i) {
      const float a = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000, static_cast<int>(rng() % 250) - 125);
      row.push_back(a);
      row.push_back(-a);
    }
    const float tiny = std::bit_cast<float>(static_cast<uint32_t>(1 + rng() % 0x00ffffff));  // subnormal or just above
    row.push_back(tiny);
    const int64_t d = static_cast<int64_t>(row.size());
    // x with d x - S = d tiny - tiny: nonzero, tiny against every other term.
    ASSERT_LE(exact_tier_error(row, tiny, d), kAllowedRelative) << "trial " << trial;
    ASSERT_EQ(simd::ExactRowSum().scaled_deviation(0.0f, 1), 0.0);
  }
}

// 100000 values near FLT_MAX: many carry passes and the top limbs.
TEST(ExactRowSum, ManyLargeValues) {
  std::vector<float> row(100000, std::numeric_limits<float>::max());
  row.back() = -std::numeric_limits<float>::denorm_min();
  EXPECT_LE(exact_tier_error(row, -std::numeric_limits<float>::max(), 3), kAllowedRelative);
  EXPECT_LE(exact_tier_error(row, std::numeric_limits<float>::max(), static_cast<int64_t>(row.size())),
            kAllowedRelative);
}

TEST(ExactRowSum, ExactlyZeroWhenXIsTheMean) {
  simd::ExactRowSum sum;
  for (const float v : {1.0f, 3.0f, 0x1p-140f, -0x1p-140f}) sum.add(v);
  EXPECT_EQ(sum.scaled_deviation(1.0f, 4), 0.0);
  EXPECT_EQ(sum.scaled_deviation(-1.0f, 4), -8.0);
}

// The negative control: count * x minus a float64 running sum fails the same
// check on a cancelling row (1e30 + 1 - 1e30 loses the 1).
TEST(ExactRowSum, NegativeControlFloat64SumFails) {
  const std::vector<float> row = {1e30f, 1.0f, -1e30f};
  double running = 0;
  for (const float v : row) running += v;
  EXPECT_GT(relative_error(3 * 0.0 - running, row, 0.0f, 3), kAllowedRelative);
  EXPECT_LE(exact_tier_error(row, 0.0f, 3), kAllowedRelative);
}

}  // namespace
}  // namespace normcheck
