// reference_norm_linear (verify/include/normcheck/reference_linear.h): z on
// rows whose xhat is exact, and the double-double dot product against exact
// rationals from the reference's own xhat (the norm's xhat is tested by the
// norm's reference tests); the scales T, S and |c| against rationals.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/reference_linear.h"
#include "rational_oracle.h"
#include "test_seed.h"

namespace normcheck {
namespace {

using test::exact;
using test::Rational;

double to_double(const Rational& q) { return q.convert_to<double>(); }

// x = (3, 1), eps = 0: mean 2, sigma 1, xhat = (1, -1) exactly, so z is a
// short sum of dyadic rationals, exact in double.
TEST(ReferenceLinear, ExactRowGivesTheExactZ) {
  const std::vector<float> x = {3, 1}, gamma = {2, 0.5f}, beta = {0.25f, -1}, w = {1, 2, 0.5f, -4}, b = {1, 0};
  const NormLinearReference ref = reference_norm_linear(Op::layernorm_linear_fwd, x, gamma, beta, w, b, 1, 2, 2, 0);
  // z0 = 1 (2 + 0.25) + 2 (-0.5 - 1) + 1 = 0.25; z1 = 0.5 (2.25) - 4 (-1.5) = 7.125
  EXPECT_EQ(ref.z[0], 0.25);
  EXPECT_EQ(ref.z[1], 7.125);
  // RMSNorm of (1, -1, 1, -1), eps = 0: xhat = x.
  const std::vector<float> xr = {1, -1, 1, -1}, wr = {1, 2, 3, 4};
  const NormLinearReference rms = reference_norm_linear(Op::rmsnorm_linear_fwd, xr, {}, {}, wr, {}, 1, 4, 1, 0);
  EXPECT_EQ(rms.z[0], 1 - 2 + 3 - 4);
  EXPECT_EQ(rms.t[0], 10);
}

TEST(ReferenceLinear, DotProductAndScalesAgainstRationals) {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> n01(0, 1);
  for (int iteration = 0; iteration < 40; ++iteration) {
    const Op op = iteration % 2 ? Op::rmsnorm_linear_fwd : Op::layernorm_linear_fwd;
    const int64_t d = 1 + static_cast<int64_t>(rng() % 200), out = 1 + static_cast<int64_t>(rng() % 8), rows = 2;
    std::vector<float> x, gamma, beta, w, b;
    for (int64_t k = 0; k < rows * d; ++k) x.push_back(static_cast<float>(3 + n01(rng)));
    for (int64_t j = 0; j < d; ++j) gamma.push_back(static_cast<float>(std::ldexp(n01(rng), static_cast<int>(rng() % 41) - 20)));
    if (op == Op::layernorm_linear_fwd)
      for (int64_t j = 0; j < d; ++j) beta.push_back(static_cast<float>(n01(rng)));
    for (int64_t k = 0; k < out * d; ++k) w.push_back(static_cast<float>(n01(rng)));
    for (int64_t i = 0; i < out; ++i) {
      // every other output's bias cancels W beta: z is small against T
      double wb = 0;
      for (int64_t j = 0; j < d && !beta.empty(); ++j) wb += static_cast<double>(w[static_cast<size_t>(i * d + j)]) * beta[static_cast<size_t>(j)];
      b.push_back(static_cast<float>(i % 2 ? -wb : n01(rng)));
    }
    const NormLinearReference ref = reference_norm_linear(op, x, gamma, beta, w, b, rows, d, out, 1e-5f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < out; ++i) {
        Rational z = exact(b[static_cast<size_t>(i)]), c = z, t = abs(z), s = 0;
        for (int64_t j = 0; j < d; ++j) {
          const Rational wij = exact(w[static_cast<size_t>(i * d + j)]);
          const Rational term = wij * exact(gamma[static_cast<size_t>(j)]) * exact(ref.xhat.exact[static_cast<size_t>(r * d + j)]);
          const Rational wb = beta.empty() ? Rational(0) : wij * exact(beta[static_cast<size_t>(j)]);
          z += term + wb;
          c += wb;
          s += abs(term);
          t += abs(term) + abs(wb);
        }
        const auto k = static_cast<size_t>(r * out + i);
        // Without xhat's own rounding, the dot product alone is far inside exact_error.
        EXPECT_LE(std::fabs(to_double(exact(ref.z[k]) - z)), ref.exact_error[k] - 0x1p-53 * ref.s[k])
            << "row " << r << " output " << i << " d " << d;
        const double slack = 1 + gamma_n(2.0 * d + 2, 0x1p-53);
        EXPECT_LE(std::fabs(ref.t[k] - to_double(t)), (slack - 1) * ref.t[k]);
        EXPECT_LE(std::fabs(ref.s[k] - to_double(s)), (slack - 1) * ref.s[k]);
        EXPECT_GE(ref.c_abs[k], to_double(abs(c)) * (1 - 0x1p-52));
      }
  }
}

TEST(ReferenceLinear, NonFiniteRowGivesNaN) {
  const std::vector<float> x = {1, NAN, 2, 3}, w = {1, 1};
  const NormLinearReference ref = reference_norm_linear(Op::rmsnorm_linear_fwd, x, {}, {}, w, {}, 2, 2, 1, 1e-5f);
  EXPECT_TRUE(std::isnan(ref.z[0]));
  EXPECT_FALSE(std::isnan(ref.z[1]));
}

}  // namespace
}  // namespace normcheck
