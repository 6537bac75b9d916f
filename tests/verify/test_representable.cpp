// Inputs constructed so the exact LayerNorm / RMSNorm output is known in closed
// form; the reference's `rounded` must equal the analytic float bit for bit,
// and `exact` the analytic value.
//
// Constructions (mu = mean, deviations v_i = x_i - mu, eps = 0 unless stated):
//  - pairs {m - a, m + a}: sigma = a, xhat = -+1, so y = beta -+ gamma, whose
//    correct float rounding is the IEEE float sum (one correctly rounded op).
//    (a = 19, 27: r = 1/a is not dyadic; see TiesRoundCorrectlyWhenRIsNotDyadic.)
//  - one value m + c a and d - 1 values m - a c/(d - 1) with d - 1 = c^2
//    (d = 5, 17, 65): sum v = 0 and mean v^2 = a^2 (c^2 + c^2/(d-1))/d = a^2,
//    so xhat = {c, -1/c, ...}: dyadic.
//  - pairs +-s around m with eps = 1 - s^2: sigma^2 + eps = 1, r = 1, xhat = +-s.
//  - constant rows with eps > 0: xhat = 0, y = beta, rstd = 1/sqrt(eps).
//  - RMSNorm on x_i = +-a: mean(x^2) = a^2, xhat = +-1, y = +-gamma, even
//    when r = 1/a is not representable.
// Each m, a is chosen so that m +- a is a float (checked), across magnitudes:
// |mean|/sigma up to 2^23, squares beyond FLT_MAX, subnormal inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "normcheck/reference.h"

namespace normcheck {
namespace {

::testing::AssertionResult same_bits(float got, float want) {
  if (std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << std::hexfloat << got << ", want " << want;
}

struct Centre {
  float m, a;
};

// m +- a exact in float, from mid-range to squares beyond FLT_MAX and subnormals.
const Centre kCentres[] = {
    {1.0f, 0.5f},           {0.0f, 3.0f},           {0.0f, 19.0f},
    {4.0f, 27.0f},          {0.0f, 0x1.fffffep0f},
    {0.0f, 0x1.8p-100f},    {0x1p20f, 1.0f},
    {-0x1p40f, 0x1.8p18f},  {0x1p100f, 0x1p77f},    {0x1p126f, 0x1p103f},
    {-0x1p127f, 0x1p104f},  {0x1p-130f, 0x1p-140f}, {0x1p-148f, 0x1p-149f},
};

TEST(ReferenceRepresentable, SymmetricPairsGiveMinusPlusOne) {
  // gamma/beta pairs whose sums need rounding (2^24 + 1 and 2^24 + 3 are ties).
  const float gammas[] = {1.0f, 3.0f, -0.375f, 0x1p-20f};
  const float betas[] = {0x1p24f, 0x1p24f, 1.0f, 0.0f};
  for (const auto [m, a] : kCentres) {
    // m -+ a are floats iff their float difference is 2a and midpoint m (both
    // exact in double for these exponent ranges).
    ASSERT_EQ(double{m + a} - double{m - a}, 2 * double{a});
    ASSERT_EQ((double{m + a} + double{m - a}) / 2, double{m});
    // Each (gamma, beta) meets both signs: pair k is {m - a, m + a} with gammas[k], betas[k].
    const int64_t d = 8;
    std::vector<float> x, gamma, beta;
    for (int k = 0; k < d / 2; ++k) {
      x.insert(x.end(), {m - a, m + a});
      gamma.insert(gamma.end(), {gammas[k], gammas[k]});
      beta.insert(beta.end(), {betas[k], betas[k]});
    }
    SCOPED_TRACE(std::string("m = ") + std::to_string(m) + ", a = " + std::to_string(a));

    const auto plain = reference_layernorm_fwd(x, {}, {}, 1, d, 0.0f);
    const auto affine = reference_layernorm_fwd(x, gamma, beta, 1, d, 0.0f);
    EXPECT_TRUE(same_bits(plain.mean.rounded[0], m));
    EXPECT_EQ(plain.mean.exact[0], m);
    EXPECT_EQ(plain.rstd.exact[0], 1.0 / a);  // a power of two or 3: 1/3 is checked as a double
    for (int64_t i = 0; i < d; ++i) {
      const float sign = i % 2 ? 1.0f : -1.0f;
      EXPECT_TRUE(same_bits(plain.y.rounded[i], sign)) << i;
      EXPECT_TRUE(same_bits(plain.xhat.rounded[i], sign)) << i;
      const float want = beta[i] + sign * gamma[i];  // IEEE: correctly rounded
      EXPECT_TRUE(same_bits(affine.y.rounded[i], want)) << i;
      EXPECT_EQ(affine.y.exact[i], double{beta[i]} + sign * double{gamma[i]}) << i;
    }
  }
}

TEST(ReferenceRepresentable, OneLargeDeviationBalancedBySmallOnes) {
  for (const int c : {2, 4, 8}) {
    const int64_t d = int64_t{c} * c + 1;
    for (const auto [m, a] : {Centre{0x1p10f, 1.0f}, Centre{-3.0f, 0x1p-4f}, Centre{0.0f, 0x1p90f}}) {
      std::vector<float> x(d, m - a / c);
      x[0] = m + c * a;
      ASSERT_EQ(double{x[0]}, double{m} + c * double{a});
      ASSERT_EQ(double{x[1]}, double{m} - double{a} / c);
      const auto ref = reference_layernorm_fwd(x, {}, {}, 1, d, 0.0f);
      EXPECT_TRUE(same_bits(ref.y.rounded[0], static_cast<float>(c))) << "d = " << d;
      for (int64_t i = 1; i < d; ++i)
        EXPECT_TRUE(same_bits(ref.y.rounded[i], -1.0f / c)) << "d = " << d << ", i = " << i;
      EXPECT_EQ(ref.rstd.exact[0], 1.0 / a);
    }
  }
}

// xhat = {2, -1/2 x 4} from x = {2a, -a/2 x 4} with a = 19: r = 1/19 is not
// dyadic, and 19 RN(1/19) < 1 at 256 bits, so a reference computing
// (x - mu) * RN(r) gets xhat_1 a hair above -1/2 and rounds the subnormal tie
// y_1 = -3/2 2^-149 to -2^-149. The exact answer is the tie, rounded to even:
// -2^-148. (The reference divides by sqrt(var + eps) = 19, exactly.)
TEST(ReferenceRepresentable, TiesRoundCorrectlyWhenRIsNotDyadic) {
  const std::vector<float> x = {38, -9.5f, -9.5f, -9.5f, -9.5f};
  const std::vector<float> gamma(5, 3 * 0x1p-149f);
  const auto ref = reference_layernorm_fwd(x, gamma, {}, 1, 5, 0.0f);
  EXPECT_TRUE(same_bits(ref.y.rounded[0], 6 * 0x1p-149f));
  for (int i = 1; i < 5; ++i) EXPECT_TRUE(same_bits(ref.y.rounded[i], -0x1p-148f)) << i;
  EXPECT_EQ(ref.xhat.exact[1], -0.5);
}

TEST(ReferenceRepresentable, EpsCompletingTheVarianceToOne) {
  for (const float s : {0.5f, 0.75f, 0x1p-6f}) {
    const float eps = 1.0f - s * s;  // exact: s^2 has few bits
    ASSERT_EQ(double{eps}, 1.0 - double{s} * s);
    const std::vector<float> x = {8 - s, 8 + s, 8 + s, 8 - s};
    const auto ref = reference_layernorm_fwd(x, {}, {}, 1, 4, eps);
    EXPECT_EQ(ref.rstd.exact[0], 1.0);
    for (int i = 0; i < 4; ++i)
      EXPECT_TRUE(same_bits(ref.y.rounded[i], x[i] < 8 ? -s : s)) << i;
  }
}

TEST(ReferenceRepresentable, ConstantRowsWithEpsGiveBeta) {
  const std::vector<float> x(6, 0.1f), beta = {1, -2, 0.5f, 0x1p-149f, 7, -0.25f};
  const std::vector<float> gamma = {3, 3, 3, 3, 3, 3};
  for (const auto& [eps, rstd] : {std::pair{0.25f, 2.0f}, std::pair{0x1p-20f, 0x1p10f}}) {
    const auto ref = reference_layernorm_fwd(x, gamma, beta, 1, 6, eps);
    const auto plain = reference_layernorm_fwd(x, {}, {}, 1, 6, eps);
    EXPECT_TRUE(same_bits(ref.rstd.rounded[0], rstd));
    EXPECT_TRUE(same_bits(ref.mean.rounded[0], 0.1f));
    for (int i = 0; i < 6; ++i) {
      EXPECT_TRUE(same_bits(ref.y.rounded[i], beta[i])) << i;
      EXPECT_EQ(plain.y.exact[i], 0.0) << i;
    }
  }
}

TEST(ReferenceRepresentable, RmsNormOfPlusMinusA) {
  const std::vector<float> gamma = {0.1f, -3.0f, 0x1p-126f, 5e37f, 1.0f, 2.5f};
  for (const float a : {3.0f, 0x1p-140f, 0x1.fffffep127f, 1e30f}) {
    const std::vector<float> x = {a, -a, a, a, -a, -a};
    const auto ref = reference_rmsnorm_fwd(x, gamma, 1, 6, 0.0f);
    EXPECT_EQ(ref.rrms.exact[0], 1.0 / a) << a;  // 1/a rounded to double both ways
    for (int i = 0; i < 6; ++i)
      EXPECT_TRUE(same_bits(ref.y.rounded[i], x[i] > 0 ? gamma[i] : -gamma[i])) << a << ", " << i;
  }
  // eps = 1 - s^2 makes r = 1: y = gamma x.
  const std::vector<float> x = {0.5f, -0.5f, 0.5f, -0.5f, 0.5f, 0.5f};
  const auto ref = reference_rmsnorm_fwd(x, gamma, 1, 6, 0.75f);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(same_bits(ref.y.rounded[i], gamma[i] * x[i])) << i;
}

// d = 2: the output is -+1 whatever x is, so the gradient is exactly 0.
TEST(ReferenceRepresentable, LayerNormBackwardOfTwoIsZero) {
  const std::vector<float> x = {1, 2, 0x1p20f, 0x1p20f + 1, -5, 7};
  const std::vector<float> dy = {0.3f, -1.7f, 2, 9, 1e3f, -4};
  const std::vector<float> gamma = {1.5f, -0.25f};
  const auto ref = reference_layernorm_bwd(dy, x, gamma, 3, 2, 0.0f);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(ref.dx.exact[i], 0.0) << i;
  // dgamma = sum dy xhat with xhat = -1, +1 per row; dbeta = sum dy. These
  // sums span under 53 bits, so they are exact in double, and one rounding
  // of the double is the correctly rounded float.
  const double dgamma0 = -double{0.3f} - 2 - 1e3, dgamma1 = double{-1.7f} + 9 - 4;
  EXPECT_EQ(ref.dgamma.exact[0], dgamma0);
  EXPECT_EQ(ref.dgamma.exact[1], dgamma1);
  EXPECT_TRUE(same_bits(ref.dgamma.rounded[0], static_cast<float>(dgamma0)));
  EXPECT_TRUE(same_bits(ref.dgamma.rounded[1], static_cast<float>(dgamma1)));
  EXPECT_EQ(ref.dbeta.exact[0], double{0.3f} + 2 + 1e3);
  EXPECT_EQ(ref.dbeta.exact[1], double{-1.7f} + 9 - 4);
}

// xhat = {2, -1/2, -1/2, -1/2, -1/2} (the d = 5 construction, a = 2^k), g = dy =
// {0, 5, 0, 0, 0}: mean(g) = 1, mean(g xhat) = -1/2, so
// dx = r (g - 1 - xhat (-1/2)) = 2^-k {0, 15/4, -5/4, -5/4, -5/4}.
TEST(ReferenceRepresentable, LayerNormBackwardOfFive) {
  for (const int k : {0, 3, -20}) {
    const float a = std::ldexp(1.0f, k), m = 1.0f;
    const std::vector<float> x = {m + 2 * a, m - a / 2, m - a / 2, m - a / 2, m - a / 2};
    ASSERT_EQ(double{x[0]}, double{m} + 2 * double{a});
    ASSERT_EQ(double{x[1]}, double{m} - double{a} / 2);
    const std::vector<float> dy = {0, 5, 0, 0, 0};
    const auto ref = reference_layernorm_bwd(dy, x, {}, 1, 5, 0.0f);
    const float want[] = {0, 3.75f, -1.25f, -1.25f, -1.25f};
    for (int i = 0; i < 5; ++i)
      // dx_0 = 0 - 1 + 1 may come out as -0: the sign of an exact zero is not a value.
      EXPECT_TRUE(want[i] == 0 ? ref.dx.exact[i] == 0
                               : same_bits(ref.dx.rounded[i], std::ldexp(want[i], -k)))
          << "k = " << k << ", i = " << i << ": " << ref.dx.exact[i];
    EXPECT_TRUE(same_bits(ref.dgamma.rounded[1], -2.5f));
  }
}

// RMSNorm, x = {1, -1, 1, -1}: xhat = x, mean(g xhat) = (1 - 2 + 3 - 4)/4 = -1/2,
// dx = g - xhat (-1/2) = {3/2, 3/2, 7/2, 7/2}.
TEST(ReferenceRepresentable, RmsNormBackwardOfPlusMinusOne) {
  const std::vector<float> x = {1, -1, 1, -1}, dy = {1, 2, 3, 4};
  const auto ref = reference_rmsnorm_bwd(dy, x, {}, 1, 4, 0.0f);
  const float want[] = {1.5f, 1.5f, 3.5f, 3.5f};
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(same_bits(ref.dx.rounded[i], want[i])) << i;
  EXPECT_TRUE(same_bits(ref.dgamma.rounded[2], 3.0f));
}

}  // namespace
}  // namespace normcheck
