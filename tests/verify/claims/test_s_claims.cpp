// S1-S5: each claim's verdict and figure are computed here by the claim code;
// the tests assert verdicts, derived ranges, and negative controls that feed
// each kind of check a deliberately wrong input.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_forms.h"
#include "semantics.h"

namespace normcheck::claims {
namespace {

ClaimOptions fast() { return ClaimOptions{}; }  // seed 20261121, fast sweeps

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- control kernels: a LayerNorm in each candidate form, two-pass in double
// then rounded (so the form, not float error, decides the classification) ----

// A row's mean and sum of squared deviations, two-pass in double.
struct DoubleMoments {
  double mean, squares;
};
DoubleMoments double_moments(const float* xr, int64_t cols) {
  double mu = 0, ss = 0;
  for (int64_t i = 0; i < cols; ++i) mu += xr[i];
  mu /= cols;
  for (int64_t i = 0; i < cols; ++i) ss += (xr[i] - mu) * (xr[i] - mu);
  return {mu, ss};
}

template <bool StdPlusEps, int Correction>
void form_kernel(const float* x, const float*, const float*, float* y, float* mean, float* rstd, int64_t rows,
                 int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const auto [mu, ss] = double_moments(x + r * cols, cols);
    const double var = ss / (cols - Correction);
    const double den = StdPlusEps ? std::sqrt(var) + eps : std::sqrt(var + eps);
    for (int64_t i = 0; i < cols; ++i) y[r * cols + i] = static_cast<float>((x[r * cols + i] - mu) / den);
    if (mean) mean[r] = static_cast<float>(mu);
    if (rstd) rstd[r] = static_cast<float>(1 / den);
  }
}

// Seed 004's rewrite and the (x - mu) form, in float from float statistics.
template <bool Rewrite>
void order_kernel(const float* x, const float*, const float*, float* y, float* mean, float* rstd, int64_t rows,
                  int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const auto [mu, ss] = double_moments(x + r * cols, cols);
    const float m = static_cast<float>(mu), s = static_cast<float>(1 / std::sqrt(ss / cols + eps));
    const float bias = -m * s;
    for (int64_t i = 0; i < cols; ++i) {
      const float scaled = x[r * cols + i] * s, centred = x[r * cols + i] - m;
      y[r * cols + i] = Rewrite ? scaled + bias : centred * s;
    }
    mean[r] = m, rstd[r] = s;
  }
}

Kernel control(std::string_view name, nc_layernorm_fwd_fn fn) {
  return Kernel{.name = name, .op = Op::layernorm_fwd, .origin = Origin::control, .dtype = DType::f32,
                .algorithm = "test control", .fn = fn, .bound = nullptr};
}

TEST(S1, HoldsExactly) {
  const ClaimResult r = kClaimS1.check(fast());
  EXPECT_EQ(r.verdict, Verdict::holds) << r.figure;
  EXPECT_FALSE(r.figure.empty());
}

TEST(S1, NegativeControlWrongNormalizationIsRefuted) {
  // A "LayerNorm" that ignores normalized_shape and always normalizes the last dim.
  const NormOp last_dim_only = [](const ExactTensor& x, int, double eps) { return layer_norm(x, 1, eps); };
  const ClaimResult r = check_s1(fast(), last_dim_only, {});
  EXPECT_EQ(r.verdict, Verdict::refuted);
  EXPECT_TRUE(contains(r.figure, "counterexample")) << r.figure;
  // And one with the unbiased variance over the right axes.
  const NormOp unbiased = [](const ExactTensor& x, int k, double eps) {
    std::vector<int> axes;
    for (int a = static_cast<int>(x.shape().size()) - k; a < static_cast<int>(x.shape().size()); ++a) axes.push_back(a);
    return x.normalized(axes, eps, {Spread::sqrt_var_plus_eps, 1});
  };
  EXPECT_EQ(check_s1(fast(), unbiased, {}).verdict, Verdict::refuted);
}

TEST(S2, DifferenceFollowsTheClosedForm) {
  const ClaimResult r = kClaimS2.check(fast());
  EXPECT_EQ(r.verdict, Verdict::holds_approximately) << r.figure;
  ASSERT_FALSE(r.series.empty());
  // |y_std - y_off| / |y_off| = |sqrt(s^2 + eps) / (s + eps) - 1| on a row of
  // standard deviation s (the claim measures it at 332 bits; here in double,
  // whose evaluation error ~1e-16 / (relative difference >= 1e-8) allows 1e-6).
  const double eps = kTorchEps;
  const Series& s = r.series.front();
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    const double expected = std::abs(std::sqrt(s.x[i] * s.x[i] + eps) / (s.x[i] + eps) - 1);
    EXPECT_NEAR(s.y[i], expected, 1e-6 * expected) << "sigma " << s.x[i];
  }
}

TEST(S2S3, FormSurveyIdentifiesControlKernels) {
  const Kernel kernels[] = {control("control.official", form_kernel<false, 0>), control("control.std_eps", form_kernel<true, 0>),
                            control("control.unbiased", form_kernel<false, 1>),
                            control("control.std_eps_unbiased", form_kernel<true, 1>)};
  const FormSurvey survey = survey_layernorm_forms(kernels, ClaimOptions{}.seed);
  ASSERT_EQ(survey.matches.size(), 4u);
  const NormForm expected[] = {{Spread::sqrt_var_plus_eps, 0}, {Spread::std_plus_eps, 0}, {Spread::sqrt_var_plus_eps, 1},
                               {Spread::std_plus_eps, 1}};
  for (int k = 0; k < 4; ++k) {
    const NormForm& got = survey.forms[survey.matches[k].closest];
    EXPECT_EQ(got.spread, expected[k].spread) << survey.matches[k].kernel;
    EXPECT_EQ(got.correction, expected[k].correction) << survey.matches[k].kernel;
  }
}

TEST(S3, TableKernelsAreBiasedAndAnUnbiasedControlIsRefuted) {
  const ClaimResult r = kClaimS3.check(fast());
  EXPECT_NE(r.verdict, Verdict::refuted) << r.figure;
  ASSERT_FALSE(r.series.empty());
  // measured ratio - 1 vs sqrt(d/(d-1)) - 1; eps = 1e-5 on N(0,1) rows moves it
  // by at most ~eps/(2 var) relative, var >= 0.1 for these rows: allow 1e-3 relative.
  const Series& s = r.series.front();
  for (std::size_t i = 0; i < s.x.size(); ++i)
    EXPECT_NEAR(s.y[i], std::sqrt(s.x[i] / (s.x[i] - 1)) - 1, 1e-3 * (std::sqrt(s.x[i] / (s.x[i] - 1)) - 1));
  const Kernel unbiased[] = {control("control.unbiased", form_kernel<false, 1>)};
  const ClaimResult refuted = check_s3(fast(), unbiased);
  EXPECT_EQ(refuted.verdict, Verdict::refuted);
  EXPECT_TRUE(contains(refuted.figure, "control.unbiased")) << refuted.figure;
}

TEST(S4, HoldsAndTellsTheFloatFormsApart) {
  const Kernel kernels[] = {control("control.rewrite", order_kernel<true>), control("control.subtract", order_kernel<false>)};
  const ClaimResult r = check_s4(fast(), kernels);
  EXPECT_EQ(r.verdict, Verdict::holds) << r.figure;
  EXPECT_TRUE(contains(r.explanation, "control.rewrite: x*r + (-mu*r)")) << r.explanation;
  EXPECT_TRUE(contains(r.explanation, "control.subtract: (x - mu)*r")) << r.explanation;
  // The control kernels compute exactly the two emulated forms, so their error
  // series equal the forms' series wherever their float mu and r agree with the
  // correctly rounded ones; at least both series exist and have every point.
  ASSERT_EQ(r.series.size(), 4u);
  EXPECT_EQ(r.series[2].y.size(), r.series[0].y.size());
  // The figure at |mu|/sigma = 1e4 (index 4: one point per decade from 1).
  // There x lies in [8192, 16384), where a float's half ulp is 2^-11 = 4.9e-4.
  // The rewrite rounds x*r and mu*r (each ~1e4) before they cancel, so over the
  // 1024 * 64 outputs its largest error reaches at least one such half ulp; the
  // (x - mu) form's error is the rounding of mu times r only (~half ulp times
  // 1/sigma of the row), measured 2.4x smaller. A regression to a handful of
  // rows, or a rewrite that subtracts first, breaks one of these.
  ASSERT_GE(r.series[0].x.size(), 5u);
  ASSERT_EQ(r.series[0].x[4], 1e4);
  EXPECT_GE(r.series[0].y[4], std::ldexp(1.0, -11));
  EXPECT_GT(r.series[0].y[4], r.series[1].y[4]);
  EXPECT_TRUE(contains(r.explanation, "1024 rows")) << r.explanation;
}

TEST(S5, HoldsAndAWrongFormulaIsRefuted) {
  const ClaimResult r = kClaimS5.check(fast());
  EXPECT_EQ(r.verdict, Verdict::holds) << r.figure;
  const ClaimResult wrong = check_s5(fast(), BackwardFormula::scale_by_d_minus_1);
  EXPECT_EQ(wrong.verdict, Verdict::refuted) << wrong.figure;
}

}  // namespace
}  // namespace normcheck::claims
