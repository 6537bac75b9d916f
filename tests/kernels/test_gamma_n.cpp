// gamma_n (normcheck/bounds.h) on its whole domain: no rounding gives 0, the
// formula n u / (1 - n u) while n u < 1, +inf once nothing is bounded.
#include <gtest/gtest.h>

#include <limits>

#include "normcheck/bounds.h"

namespace normcheck {
namespace {

TEST(GammaN, NoRoundingIsZero) {
  EXPECT_EQ(gamma_n(0), 0);
  EXPECT_EQ(gamma_n(-1), 0);
  EXPECT_EQ(gamma_n(-5, kUnitRoundoff64), 0);
}

TEST(GammaN, TheFormulaWhileNuIsBelowOne) {
  const double u = kUnitRoundoff;
  EXPECT_EQ(gamma_n(1), u / (1 - u));
  EXPECT_EQ(gamma_n(768), 768 * u / (1 - 768 * u));
  EXPECT_EQ(gamma_n(3, kUnitRoundoff64), 3 * kUnitRoundoff64 / (1 - 3 * kUnitRoundoff64));
  EXPECT_EQ(gamma_n(5), gamma_n(5, kUnitRoundoff));  // float32's u is the default
}

TEST(GammaN, InfiniteOnceNuReachesOne) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(gamma_n(0x1p24), kInf);
  EXPECT_EQ(gamma_n(0x1p30), kInf);
  EXPECT_EQ(gamma_n(0x1p53, kUnitRoundoff64), kInf);
  EXPECT_LT(gamma_n(0x1p24 - 1), kInf);
}

}  // namespace
}  // namespace normcheck
