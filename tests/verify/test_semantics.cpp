// The agreed semantics (docs/semantics.md) of the references: non-finite
// inputs, constant rows with and without eps, d = 1, rows whose squares
// overflow float, outputs beyond the float range, rounding at the subnormal
// and overflow boundaries, and argument checking. Expected values are closed
// forms derived in the comments (dyadic, so exact in float and double).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "normcheck/reference.h"

namespace normcheck {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMax = std::numeric_limits<float>::max();

bool all_nan(std::span<const double> v) {
  for (double e : v)
    if (!std::isnan(e)) return false;
  return true;
}

TEST(ReferenceSemantics, NonFiniteRowIsNaNAndLeavesOtherRowsAlone) {
  // Row 0 NaN, row 1 +inf, row 2 +inf and -inf, row 3 finite {1, 2, 3}.
  const std::vector<float> x = {1, kNaN, 3, 1, kInf, 3, kInf, -kInf, 3, 1, 2, 3};
  const auto ref = reference_layernorm_fwd(x, {}, {}, 4, 3, 1e-5f);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(all_nan(std::span(ref.y.exact).subspan(3 * r, 3))) << r;
    EXPECT_TRUE(std::isnan(ref.y.rounded[3 * r]));
    EXPECT_TRUE(std::isnan(ref.rstd.exact[r])) << r;
    EXPECT_FALSE(ref.stats[r].finite);
  }
  EXPECT_TRUE(std::isnan(ref.mean.exact[0]));
  EXPECT_EQ(ref.mean.exact[1], kInf);  // the mean in the extended reals
  EXPECT_TRUE(std::isnan(ref.mean.exact[2]));
  EXPECT_TRUE(ref.stats[3].finite);
  EXPECT_EQ(ref.mean.exact[3], 2.0);
  EXPECT_EQ(ref.y.exact[10], 0.0);

  const auto rms = reference_rmsnorm_fwd(x, {}, 4, 3, 1e-5f);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(all_nan(std::span(rms.y.exact).subspan(3 * r, 3))) << r;
    EXPECT_TRUE(std::isnan(rms.rrms.exact[r])) << r;
  }
  EXPECT_TRUE(std::isfinite(rms.rrms.exact[3]));
}

// Non-finite gamma/beta act elementwise by IEEE rules: inf * xhat is +-inf,
// inf * 0 is NaN, NaN stays NaN, and only that column is touched.
TEST(ReferenceSemantics, NonFiniteGammaBetaAreElementwise) {
  const std::vector<float> x = {-1, 1, 0, 5, 5, 5};  // row 1 constant: xhat = 0
  const std::vector<float> gamma = {kInf, 1, 1}, beta = {0, kNaN, 2};
  const auto ref = reference_layernorm_fwd(x, gamma, beta, 2, 3, 1e-5f);
  EXPECT_EQ(ref.y.exact[0], -kInf);       // inf * xhat(< 0)
  EXPECT_TRUE(std::isnan(ref.y.exact[1]));  // + NaN
  EXPECT_TRUE(std::isfinite(ref.y.exact[2]));
  EXPECT_TRUE(std::isnan(ref.y.exact[3]));  // inf * 0
  EXPECT_EQ(ref.y.exact[5], 2.0);
  EXPECT_TRUE(std::isfinite(ref.rstd.exact[0]));
}

// eps = 0 and zero variance: r = +inf, xhat = 0 * inf = NaN, mean exact.
TEST(ReferenceSemantics, ConstantRowWithoutEps) {
  const std::vector<float> x = {0.1f, 0.1f, 0.1f, 0.1f};
  const auto ref = reference_layernorm_fwd(x, {}, {}, 1, 4, 0.0f);
  EXPECT_TRUE(all_nan(ref.y.exact));
  EXPECT_TRUE(all_nan(ref.xhat.exact));
  EXPECT_EQ(ref.rstd.exact[0], kInf);
  EXPECT_EQ(ref.rstd.rounded[0], kInf);
  EXPECT_EQ(ref.mean.rounded[0], 0.1f);
  EXPECT_EQ(ref.mean.exact[0], double{0.1f});

  const std::vector<float> dy = {1, 2, 3, 4};
  const auto bwd = reference_layernorm_bwd(dy, x, {}, 1, 4, 0.0f);
  EXPECT_TRUE(all_nan(bwd.dx.exact));
  EXPECT_TRUE(all_nan(bwd.dgamma.exact));  // sum dy * NaN
  EXPECT_EQ(bwd.dbeta.exact, (std::vector<double>{1, 2, 3, 4}));

  const std::vector<float> zeros(4, 0.0f);
  EXPECT_TRUE(all_nan(reference_rmsnorm_fwd(zeros, {}, 1, 4, 0.0f).y.exact));
}

// eps > 0 and zero variance: xhat = 0, y = beta, rstd = 1/sqrt(eps);
// dx = r (g - mean(g)) (the xhat term vanishes): with eps = 1/4, r = 2 and
// g = {1, 2, 3, 4}, dx = 2 {-3/2, -1/2, 1/2, 3/2}.
TEST(ReferenceSemantics, ConstantRowWithEps) {
  const std::vector<float> x(4, -7.0f), beta = {1, 2, 3, 4};
  const auto ref = reference_layernorm_fwd(x, {}, beta, 1, 4, 0.25f);
  EXPECT_EQ(ref.rstd.exact[0], 2.0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ref.xhat.exact[i], 0.0);
    EXPECT_EQ(ref.y.rounded[i], beta[i]);
  }
  const auto eps5 = reference_layernorm_fwd(x, {}, {}, 1, 4, 1e-5f);
  // 1/sqrt(eps) twice rounded in double: within 2 ULP of double (2^-51 relative).
  EXPECT_NEAR(eps5.rstd.exact[0], 1 / std::sqrt(double{1e-5f}), 0x1p-51 * eps5.rstd.exact[0]);
  EXPECT_EQ(eps5.stats[0].condition.eps_share, 1.0);

  const std::vector<float> dy = {1, 2, 3, 4};
  const auto bwd = reference_layernorm_bwd(dy, x, {}, 1, 4, 0.25f);
  EXPECT_EQ(bwd.dx.exact, (std::vector<double>{-3, -1, 1, 3}));
  EXPECT_EQ(bwd.dgamma.exact, (std::vector<double>{0, 0, 0, 0}));
}

// d = 1: LayerNorm's variance is 0 (y = beta with eps > 0, NaN with eps = 0,
// dx = r (g - g) = 0); RMSNorm gives gamma sign(x) with eps = 0.
TEST(ReferenceSemantics, SingleElementRows) {
  const std::vector<float> x = {3, -2e30f, 0}, gamma = {5}, beta = {0.5f}, dy = {1, 2, 3};
  const auto with_eps = reference_layernorm_fwd(x, gamma, beta, 3, 1, 1e-5f);
  const auto no_eps = reference_layernorm_fwd(x, gamma, beta, 3, 1, 0.0f);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(with_eps.y.exact[r], 0.5) << r;
    EXPECT_TRUE(std::isnan(no_eps.y.exact[r])) << r;
    EXPECT_EQ(no_eps.rstd.exact[r], kInf) << r;
    EXPECT_EQ(no_eps.mean.exact[r], x[r]) << r;
  }
  const auto bwd = reference_layernorm_bwd(dy, x, gamma, 3, 1, 1e-5f);
  EXPECT_EQ(bwd.dx.exact, (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(all_nan(reference_layernorm_bwd(dy, x, gamma, 3, 1, 0.0f).dx.exact));

  const auto rms = reference_rmsnorm_fwd(x, gamma, 3, 1, 0.0f);
  EXPECT_EQ(rms.y.exact[0], 5.0);
  EXPECT_EQ(rms.y.exact[1], -5.0);
  EXPECT_TRUE(std::isnan(rms.y.exact[2]));  // 0 * inf
}

// |x| ~ 1e30 .. FLT_MAX: x^2 overflows float, but the exact result is finite.
// {m - a, m + a} gives y = -+1; RMSNorm of {a, b} is {a, b}/sqrt((a^2 + b^2)/2).
TEST(ReferenceSemantics, SquaresBeyondFloatRangeGiveTheFiniteResult) {
  const std::vector<float> x = {-1e30f, 1e30f, -kFltMax, kFltMax};
  const auto ref = reference_layernorm_fwd(x, {}, {}, 2, 2, 1e-5f);
  EXPECT_EQ(ref.y.rounded, (std::vector<float>{-1, 1, -1, 1}));
  EXPECT_NEAR(ref.rstd.exact[0], 1 / double{1e30f}, 0x1p-51 / 1e30);
  EXPECT_GT(ref.rstd.exact[1], 0);

  // In double, a^2 + b^2 ~ 1e61 is far inside the range: the formula there
  // is accurate to a few double ULP, so 2^-50 (|y| < 2) is a safe tolerance.
  const float a = 1e30f, b = 3e30f;
  const auto rms = reference_rmsnorm_fwd(std::vector<float>{a, b}, {}, 1, 2, 0.0f);
  const double root = std::sqrt((double{a} * a + double{b} * b) / 2);
  EXPECT_NEAR(rms.y.exact[0], a / root, 0x1p-50);
  EXPECT_NEAR(rms.y.exact[1], b / root, 0x1p-50);
  EXPECT_TRUE(std::isfinite(rms.rrms.exact[0]));
}

// An exact output beyond FLT_MAX: `exact` keeps it, `rounded` is inf. Here
// xhat = {2, -1/2 x 4} (d = 5 construction) and gamma = FLT_MAX: y_0 = 2 FLT_MAX.
TEST(ReferenceSemantics, OutputsBeyondFloatRangeRoundToInf) {
  const std::vector<float> x = {3, 0.5f, 0.5f, 0.5f, 0.5f}, gamma(5, kFltMax);
  const auto ref = reference_layernorm_fwd(x, gamma, {}, 1, 5, 0.0f);
  EXPECT_EQ(ref.y.exact[0], 2.0 * kFltMax);
  EXPECT_EQ(ref.y.rounded[0], kInf);
  EXPECT_EQ(ref.y.rounded[1], -kFltMax / 2);
}

// Rounding to float straight from the exact value, at the boundaries. With
// xhat = -1/2 (the d = 5 construction) y = beta - gamma/2:
//  - gamma = 2^-149, beta = 0: y = -2^-150, a tie between -0 and -2^-149 -> -0 (even);
//  - gamma = 3 2^-149: y = -1.5 2^-149, a tie between 1 and 2 subnormal ULPs -> -2^-148;
//  - gamma = -2^104, beta = FLT_MAX: y = FLT_MAX + 2^103, the tie between
//    FLT_MAX (odd) and 2^128 -> +inf; with xhat = -1/4 (d = 17) y = FLT_MAX
//    + 2^102, below the tie -> FLT_MAX.
TEST(ReferenceSemantics, RoundsOnceAtSubnormalAndOverflowBoundaries) {
  const std::vector<float> x5 = {3, 0.5f, 0.5f, 0.5f, 0.5f};  // mean 1, sigma 1
  auto y1 = [&](float gamma, float beta) {
    const std::vector<float> g(5, gamma), b(5, beta);
    return reference_layernorm_fwd(x5, g, b, 1, 5, 0.0f).y.rounded[1];
  };
  EXPECT_EQ(std::bit_cast<uint32_t>(y1(0x1p-149f, 0)), std::bit_cast<uint32_t>(-0.0f));
  EXPECT_EQ(y1(3 * 0x1p-149f, 0), -0x1p-148f);
  EXPECT_EQ(y1(-0x1p104f, kFltMax), kInf);

  std::vector<float> x17(17, 0.75f);  // m = 1, a = 1, c = 4: xhat = {4, -1/4 x 16}
  x17[0] = 5;
  const std::vector<float> g(17, -0x1p104f), b(17, kFltMax);
  EXPECT_EQ(reference_layernorm_fwd(x17, g, b, 1, 17, 0.0f).y.rounded[1], kFltMax);
}

// Backward: a row with non-finite x or dy gets an all-NaN dx; dgamma/dbeta
// are extended-real column sums (a NaN xhat row spoils every dgamma column,
// an inf dy only its own column).
TEST(ReferenceSemantics, BackwardNonFiniteRows) {
  const std::vector<float> x = {1, kNaN, 3, 1, 2, 3, 1, 2, 4};
  const std::vector<float> dy = {1, 1, 1, kInf, 0, 1, 1, 2, 3};
  const auto ref = reference_layernorm_bwd(dy, x, {}, 3, 3, 1e-5f);
  EXPECT_TRUE(all_nan(std::span(ref.dx.exact).subspan(0, 3)));
  EXPECT_TRUE(all_nan(std::span(ref.dx.exact).subspan(3, 3)));
  for (int j = 6; j < 9; ++j) EXPECT_TRUE(std::isfinite(ref.dx.exact[j])) << j;
  EXPECT_TRUE(all_nan(ref.dgamma.exact));
  EXPECT_EQ(ref.dbeta.exact[0], kInf);
  EXPECT_EQ(ref.dbeta.exact[1], 3.0);
  EXPECT_EQ(ref.dbeta.exact[2], 5.0);

  const auto rms = reference_rmsnorm_bwd(dy, x, {}, 3, 3, 1e-5f);
  EXPECT_TRUE(all_nan(std::span(rms.dx.exact).subspan(0, 6)));
  EXPECT_TRUE(std::isfinite(rms.dx.exact[8]));
}

TEST(ReferenceSemantics, RejectsBadArguments) {
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_THROW(reference_layernorm_fwd(x, {}, {}, 1, 4, -1e-5f), std::invalid_argument);
  EXPECT_THROW(reference_layernorm_fwd(x, {}, {}, 1, 4, kNaN), std::invalid_argument);
  EXPECT_THROW(reference_layernorm_fwd(x, {}, {}, 1, 3, 0), std::invalid_argument);  // size
  EXPECT_THROW(reference_layernorm_fwd(x, {}, {}, 4, 0, 0), std::invalid_argument);  // d = 0
  EXPECT_THROW(reference_layernorm_fwd(x, x, {}, 2, 2, 0), std::invalid_argument);   // gamma
  EXPECT_THROW(reference_rmsnorm_fwd(x, {}, 1, 4, 0, 32), std::invalid_argument);    // bits
  EXPECT_THROW(reference_layernorm_bwd(x, x, {}, 2, 3, 0), std::invalid_argument);
  EXPECT_TRUE(reference_layernorm_fwd({}, {}, {}, 0, 4, 0).y.exact.empty());  // no rows
}

}  // namespace
}  // namespace normcheck
