// Recomputing the reference at twice the precision changes nothing at float
// resolution: every float-rounded output is bit-identical, and the unrounded
// values agree to 2^-100 relative to the scale each output's error bound is
// measured against (far below float's 2^-24; a 256-bit computation is expected
// to agree to ~2^-240).
//
// How this test fails: a reference whose error is not negligible (too little
// working precision, a lossy intermediate) differs from its 2x-precision
// recomputation. The negative control runs the same comparator on a 64-bit
// computation and requires it to object on an ill-conditioned row.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "normcheck/reference.h"
#include "reference_mp.h"
#include "test_rows.h"
#include "test_seed.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::raw;
using mp::Real;

constexpr double kAgreement = 0x1p-100;

bool same_float(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

// |a - b| <= kAgreement * scale, with NaN and infinities required to match
// exactly, and the float roundings bit-identical.
std::optional<std::string> differs(const std::string& what, const Real& a, const Real& b,
                                   double scale) {
  const float fa = mp::round_to_float(a), fb = mp::round_to_float(b);
  if (!same_float(fa, fb))
    return what + ": float roundings differ (" + std::to_string(fa) + " vs " + std::to_string(fb) + ")";
  if (mpfr_nan_p(raw(a)) || mpfr_nan_p(raw(b)) || mpfr_inf_p(raw(a)) || mpfr_inf_p(raw(b))) {
    if (mpfr_nan_p(raw(a)) && mpfr_nan_p(raw(b))) return std::nullopt;
    if (mpfr_inf_p(raw(a)) && mpfr_inf_p(raw(b)) && mpfr_sgn(raw(a)) == mpfr_sgn(raw(b)))
      return std::nullopt;
    return what + ": non-finite in one only";
  }
  Real diff = mp::make_real(1024);
  mpfr_sub(raw(diff), raw(a), raw(b), MPFR_RNDN);  // nearby values: exact in 1024 bits
  const double d = std::fabs(mp::round_to_double(diff));
  if (d <= kAgreement * scale) return std::nullopt;
  return what + ": differs by " + std::to_string(d) + " at scale " + std::to_string(scale);
}

double to_d(const Real& v) { return mp::round_to_double(v); }

// First disagreement between two evaluations of the same row, each value
// compared at the scale of its error bound (kernel.h's Bound): mean against
// mean|x|, r and variance against themselves, xhat against max(|xhat|, 1) (xhat is
// O(1) and the bound carries an absolute term), y against |gamma xhat| + |beta|,
// dx against r (|g| + mean|g| + |xhat| mean|g xhat|).
std::optional<std::string> first_difference(const mp::NormRow& a, const mp::NormRow& b,
                                            std::span<const float> gamma,
                                            std::span<const float> beta,
                                            std::span<const float> dy) {
  const double mean_abs = to_d(b.mean_abs_x);
  if (auto m = differs("mean", a.mean, b.mean, mean_abs)) return m;
  if (auto m = differs("variance", a.variance, b.variance, std::fabs(to_d(b.variance)))) return m;
  if (auto m = differs("r", a.r, b.r, std::fabs(to_d(b.r)))) return m;
  for (int64_t i = 0; i < b.d(); ++i) {
    const double xhat = std::fabs(to_d(b.xhat[i]));
    const std::string at = std::string("[") + std::to_string(i) + "]";
    if (auto m = differs("xhat" + at, a.xhat[i], b.xhat[i], std::max(xhat, 1.0))) return m;
    const double g = gamma.empty() ? 1 : std::fabs(gamma[i]);
    const double bias = beta.empty() ? 0 : std::fabs(beta[i]);
    if (auto m = differs("y" + at, a.y[i], b.y[i], g * xhat + bias)) return m;
    if (dy.empty()) continue;
    const double gi = std::fabs(double{dy[i]} * g);
    const double dx_scale = std::fabs(to_d(b.r)) * (gi + to_d(b.mean_abs_g) +
                                                     xhat * to_d(b.mean_abs_g_xhat));
    if (auto m = differs("dx" + at, a.dx[i], b.dx[i], dx_scale)) return m;
  }
  return std::nullopt;
}

std::vector<float> random_vector(std::mt19937_64& rng, std::size_t n) {
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n);
  for (auto& f : v) f = normal(rng);
  return v;
}

class ReferencePrecision : public ::testing::TestWithParam<Norm> {};

TEST_P(ReferencePrecision, DoublingThePrecisionChangesNothing) {
  std::mt19937_64 rng(test::test_seed());
  const Norm norm = GetParam();
  mp::NormRow base(norm, kDefaultPrecisionBits), twice(norm, 2 * kDefaultPrecisionBits);
  int compared = 0;
  for (const auto& [name, x] : test::test_rows(rng)) {
    const auto gamma = random_vector(rng, x.size()), beta = random_vector(rng, x.size());
    const auto dy = random_vector(rng, x.size());
    const std::span<const float> no_beta;
    for (float eps : {0.0f, 1e-5f, 1.0f}) {
      const auto b = norm == Norm::layer ? std::span<const float>(beta) : no_beta;
      base.forward(x, gamma, b, eps);
      twice.forward(x, gamma, b, eps);
      base.backward(dy, gamma);
      twice.backward(dy, gamma);
      const auto diff = first_difference(base, twice, gamma, b, dy);
      EXPECT_FALSE(diff) << name << ", eps " << eps << ": " << *diff;
      ++compared;
    }
  }
  EXPECT_GT(compared, 40);
}

INSTANTIATE_TEST_SUITE_P(Norms, ReferencePrecision, ::testing::Values(Norm::layer, Norm::rms),
                         [](const auto& info) {
                           return info.param == Norm::layer ? "LayerNorm" : "RMSNorm";
                         });

// The column sums (dgamma, dbeta) go through the public API: their rounded
// floats must be identical and their double roundings equal (a 2^-240
// difference moves a double only if it straddles a rounding boundary).
TEST(ReferencePrecision, ColumnSumsUnchangedAtTwicePrecision) {
  std::mt19937_64 rng(test::test_seed());
  const int64_t rows = 6, cols = 9;
  std::vector<float> x, dy;
  for (int64_t i = 0; i < rows; ++i) {
    const double offset = i % 2 ? 1e4 : 0;  // two rows with |mean|/sigma ~ 1e4
    for (float v : random_vector(rng, cols)) x.push_back(static_cast<float>(v + offset));
  }
  dy = random_vector(rng, rows * cols);
  const auto gamma = random_vector(rng, cols);
  const auto a = reference_layernorm_bwd(dy, x, gamma, rows, cols, 1e-5f);
  const auto b = reference_layernorm_bwd(dy, x, gamma, rows, cols, 1e-5f, 2 * kDefaultPrecisionBits);
  const auto ra = reference_rmsnorm_bwd(dy, x, gamma, rows, cols, 1e-5f);
  const auto rb = reference_rmsnorm_bwd(dy, x, gamma, rows, cols, 1e-5f, 2 * kDefaultPrecisionBits);
  for (int64_t j = 0; j < cols; ++j) {
    EXPECT_TRUE(same_float(a.dgamma.rounded[j], b.dgamma.rounded[j])) << j;
    EXPECT_TRUE(same_float(a.dbeta.rounded[j], b.dbeta.rounded[j])) << j;
    EXPECT_TRUE(same_float(ra.dgamma.rounded[j], rb.dgamma.rounded[j])) << j;
    EXPECT_EQ(a.dgamma.exact[j], b.dgamma.exact[j]) << j;
    EXPECT_EQ(a.dbeta.exact[j], b.dbeta.exact[j]) << j;
    EXPECT_EQ(ra.dgamma.exact[j], rb.dgamma.exact[j]) << j;
  }
}

// Negative control: a 64-bit computation of an ill-conditioned row (|mean|/sigma
// ~ 2^20, so the mean's 2^-64 error is 2^-44 of sigma) is caught by the same
// comparator against 512 bits.
TEST(ReferencePrecisionNegative, CatchesA64BitReference) {
  std::vector<float> x;
  for (int i = 0; i < 33; ++i) x.push_back(0x1p20f + static_cast<float>(i % 5) - 2.0f);
  x.push_back(0x1p-3f);  // a small element breaks exact sums at 64 bits
  mp::NormRow low(Norm::layer, 64), high(Norm::layer, 512);
  low.forward(x, {}, {}, 1e-5f);
  high.forward(x, {}, {}, 1e-5f);
  EXPECT_TRUE(first_difference(low, high, {}, {}, {}).has_value());
}

}  // namespace
}  // namespace normcheck
