// evaluate()'s rule for rows with a non-finite input (evaluate.h: NonFinite,
// NonFiniteConvention; docs/semantics.md "Rows with a non-finite input").
// Textbook kernels without a non-finite-row guard (the two-pass LayerNorm
// forward is examples/in-your-tests' my_layernorm_fwd, the others are written
// plainly here) and our own kernels are not flagged on rows with NaN or an
// infinity in x or dy, over several seeds, and the convention each follows is reported. The
// negative controls are still caught: kernels that hide the fault (finite
// values where every convention is non-finite, or a finite value that is not
// the IEEE one) and kernels that invent one (NaN or inf on a finite row).
// NonFinite::row_nan_only holds the row-NaN convention alone, the rule
// evaluate() applied before: the textbook kernels fail it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "describe_evaluation.h"
#include "my_norms.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "test_seed.h"

namespace normcheck {
namespace {

using C = NonFiniteConvention;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float at(const float* v, int64_t j, float missing) { return v ? v[j] : missing; }

// ---- textbook kernels: the formulas in float, sums in order, no guard ----

// LayerNorm forward, Welford's one-pass mean and M2.
void textbook_welford_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float mu = 0, m2 = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const float delta = xr[j] - mu;
      mu += delta / static_cast<float>(j + 1);
      m2 += delta * (xr[j] - mu);
    }
    const float rs = 1.0f / std::sqrt(m2 / static_cast<float>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = (xr[j] - mu) * rs * at(gamma, j, 1) + at(beta, j, 0);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

// RMSNorm forward.
void textbook_rmsnorm_fwd(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                          float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float squares = 0;
    for (int64_t j = 0; j < cols; ++j) squares += xr[j] * xr[j];
    const float rr = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = xr[j] * rr * at(gamma, j, 1);
    if (rrms) rrms[r] = rr;
  }
}

// LayerNorm backward from the saved mean and rstd: dx = rstd (g - mean(g) - xhat mean(g xhat)).
void textbook_layernorm_bwd(const float* dy, const float* x, const float* gamma, const float* mean,
                            const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  const float d = static_cast<float>(cols);
  for (int64_t j = 0; j < cols; ++j) {
    if (dgamma) dgamma[j] = 0;
    if (dbeta) dbeta[j] = 0;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols, *dyr = dy + r * cols;
    float sum_g = 0, sum_g_xhat = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (xr[j] - mean[r]) * rstd[r], g = at(gamma, j, 1) * dyr[j];
      sum_g += g;
      sum_g_xhat += g * xhat;
      if (dgamma) dgamma[j] += dyr[j] * xhat;
      if (dbeta) dbeta[j] += dyr[j];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (xr[j] - mean[r]) * rstd[r], g = at(gamma, j, 1) * dyr[j];
      dx[r * cols + j] = rstd[r] * (g - sum_g / d - xhat * (sum_g_xhat / d));
    }
  }
}

// RMSNorm backward from the saved rrms: dx = rrms (g - xhat mean(g xhat)).
void textbook_rmsnorm_bwd(const float* dy, const float* x, const float* gamma, const float* rrms, float* dx,
                          float* dgamma, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols && dgamma; ++j) dgamma[j] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols, *dyr = dy + r * cols;
    float sum_g_xhat = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = xr[j] * rrms[r];
      sum_g_xhat += at(gamma, j, 1) * dyr[j] * xhat;
      if (dgamma) dgamma[j] += dyr[j] * xhat;
    }
    for (int64_t j = 0; j < cols; ++j)
      dx[r * cols + j] = rrms[r] * (at(gamma, j, 1) * dyr[j] - xr[j] * rrms[r] * (sum_g_xhat / static_cast<float>(cols)));
  }
}

Kernel textbook(const char* name, Op op, KernelFn fn, BoundFn bound) {
  return Kernel{.name = name, .op = op, .origin = Origin::ours, .dtype = DType::f32,
                .algorithm = "textbook, no non-finite guard", .fn = fn, .bound = bound};
}

const Kernel kTextbookLayerNormFwd =
    textbook("textbook.layernorm_fwd", Op::layernorm_fwd, &my_layernorm_fwd, &twopass_layernorm_fwd_bound);
const Kernel kTextbookWelfordFwd =
    textbook("textbook.welford_fwd", Op::layernorm_fwd, &textbook_welford_fwd, &welford_layernorm_fwd_bound);
const Kernel kTextbookRmsNormFwd =
    textbook("textbook.rmsnorm_fwd", Op::rmsnorm_fwd, &textbook_rmsnorm_fwd, &rmsnorm_fwd_bound);
const Kernel kTextbookLayerNormBwd =
    textbook("textbook.layernorm_bwd", Op::layernorm_bwd, &textbook_layernorm_bwd, &twopass_layernorm_bwd_bound);
const Kernel kTextbookRmsNormBwd =
    textbook("textbook.rmsnorm_bwd", Op::rmsnorm_bwd, &textbook_rmsnorm_bwd, &rmsnorm_bwd_bound);

// ---- problems ----

bool backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }

// Rows of N(0, 1) (with gamma, and beta where the op has one, when `affine`),
// among them rows with a non-finite input: +inf; -inf and +inf; NaN; zeros and
// +inf (RMSNorm's [0, inf]: IEEE gives y = [0, NaN]); and, for a backward, a
// finite x with one +inf dy, and one with a NaN dy. A norm followed by a
// Linear gets W (3 x cols) and a bias.
Problem problem(std::mt19937_64& rng, Op op, int64_t cols, bool affine, float eps) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p;
  p.rows = 8;
  p.cols = cols;
  p.eps = eps;
  for (int64_t i = 0; i < p.rows * cols; ++i) {
    p.x.push_back(normal(rng));
    p.dy.push_back(normal(rng));
  }
  std::uniform_int_distribution<int64_t> col(0, cols - 1);
  const auto at_row = [&](std::vector<float>& v, int64_t row) -> float& {
    return v[static_cast<std::size_t>(row * cols + col(rng))];
  };
  at_row(p.x, 1) = kInf;
  at_row(p.x, 2) = -kInf;
  at_row(p.x, 2) = kInf;  // the same element as -inf when cols = 1
  at_row(p.x, 3) = kNaN;
  std::fill(p.x.begin() + 4 * cols, p.x.begin() + 5 * cols, 0.0f);
  at_row(p.x, 4) = kInf;
  at_row(p.dy, 5) = kInf;
  at_row(p.dy, 6) = kNaN;
  if (!backward(op)) p.dy.clear();
  if (affine) {
    for (int64_t j = 0; j < cols; ++j) p.gamma.push_back(1.0f + 0.5f * normal(rng));
    if (op == Op::layernorm_fwd || op == Op::layernorm_linear_fwd)
      for (int64_t j = 0; j < cols; ++j) p.beta.push_back(0.5f * normal(rng));
  }
  if (is_norm_linear(op)) {
    p.out_features = 3;
    for (int64_t i = 0; i < p.out_features * cols; ++i)
      p.weight.push_back(normal(rng) / std::sqrt(static_cast<float>(cols)));
    for (int64_t i = 0; i < p.out_features; ++i) p.bias.push_back(0.1f * normal(rng));
  }
  return p;
}

Evaluation evaluate_with(const Kernel& k, const Problem& p, NonFinite rule) {
  EvaluateOptions options;
  options.nonfinite = rule;
  return evaluate(k, p, options);
}

// The seeds of a test: NORMCHECK_SEED's (or the default) and four after it.
std::vector<uint64_t> seeds() {
  const uint64_t first = test::test_seed();
  return {first, first + 1, first + 2, first + 3, first + 4};
}

constexpr int64_t kWidths[] = {1, 2, 3, 17, 64};

// ---- the textbook kernels and ours are not flagged ----

TEST(EvaluateNonFinite, TextbookKernelsAreNotFlagged) {
  for (const Kernel* k : {&kTextbookLayerNormFwd, &kTextbookWelfordFwd, &kTextbookRmsNormFwd,
                          &kTextbookLayerNormBwd, &kTextbookRmsNormBwd})
    for (const uint64_t seed : seeds())
      for (const int64_t cols : kWidths)
        for (const bool affine : {false, true}) {
          std::mt19937_64 rng(seed);
          const Problem p = problem(rng, k->op, cols, affine, affine ? 1e-5f : 0.0f);
          const Evaluation ev = evaluate(*k, p);
          const std::string where = std::string(k->name) + " seed " + std::to_string(seed) + " d " +
                                    std::to_string(cols) + (affine ? " affine" : "");
          EXPECT_TRUE(ev.pass) << where << ": " << test::describe(ev);
          EXPECT_FALSE(ev.nonfinite_mismatch) << where;
          // RMSNorm's IEEE evaluation differs from row-NaN on the rows of
          // infinities; LayerNorm forward's is NaN throughout (both).
          if (k->op == Op::rmsnorm_fwd) {
            EXPECT_EQ(ev.nonfinite_convention, C::ieee) << where;
          }
          if (k->op == Op::layernorm_fwd) {
            EXPECT_EQ(ev.nonfinite_convention, C::both) << where;
          }
          if (backward(k->op)) {
            EXPECT_TRUE(ev.nonfinite_convention == C::ieee || ev.nonfinite_convention == C::both) << where;
          }
        }
}

// Every kernel of ours (not the controls, not the adapters), every op and
// dtype, on the same problems.
TEST(EvaluateNonFinite, OurKernelsAreNotFlagged) {
  for (const Kernel& k : kernel_table()) {
    if (k.origin != Origin::ours) continue;
    for (const uint64_t seed : seeds())
      for (const int64_t cols : kWidths) {
        std::mt19937_64 rng(seed);
        const Problem p = problem(rng, k.op, cols, seed % 2 == 0, 1e-5f);
        const Evaluation ev = evaluate(k, p);
        if (!ev.declined.empty()) continue;
        const std::string where = std::string(k.name) + " seed " + std::to_string(seed) + " d " + std::to_string(cols);
        EXPECT_TRUE(ev.pass) << where << ": " << test::describe(ev);
        EXPECT_NE(ev.nonfinite_convention, C::none) << where;
        EXPECT_NE(ev.nonfinite_convention, C::neither) << where;
      }
  }
}

// The example: RMSNorm of x = [0, inf]. The textbook kernel gives
// y = [0, NaN] and rrms = 0, the IEEE evaluation; ours gives NaN throughout.
// Both pass; row_nan_only, the rule evaluate() applied before, fails the
// textbook kernel on y_0.
TEST(EvaluateNonFinite, RmsNormOfZeroAndInfinity) {
  Problem p;
  p.rows = 1;
  p.cols = 2;
  p.x = {0.0f, kInf};
  p.eps = 1e-5f;
  const Evaluation textbook = evaluate(kTextbookRmsNormFwd, p);
  EXPECT_TRUE(textbook.pass) << test::describe(textbook);
  EXPECT_EQ(textbook.nonfinite_convention, C::ieee);
  const Evaluation ours = evaluate(*find_kernel("rmsnorm_fwd.scalar"), p);
  EXPECT_TRUE(ours.pass) << test::describe(ours);
  EXPECT_EQ(ours.nonfinite_convention, C::row_nan);

  const Evaluation strict = evaluate_with(kTextbookRmsNormFwd, p, NonFinite::row_nan_only);
  EXPECT_FALSE(strict.pass);
  EXPECT_TRUE(strict.nonfinite_mismatch);
  EXPECT_EQ(strict.nonfinite_convention, C::ieee);  // what it follows, whichever rule holds it
  EXPECT_EQ(strict.worst.output, "rrms");           // met first: rrms = 0 where row-NaN gives NaN
  EXPECT_TRUE(evaluate_with(*find_kernel("rmsnorm_fwd.scalar"), p, NonFinite::row_nan_only).pass);
}

// A backward with one infinite dy: the textbook formula gives infinities of
// either sign and NaN (inf - inf) in dx; the row-NaN convention NaN. The old
// rule flagged the textbook kernel; the new one does not, and says IEEE.
TEST(EvaluateNonFinite, BackwardWithAnInfiniteDy) {
  Problem p;
  p.rows = 1;
  p.cols = 4;
  p.x = {1.0f, 2.0f, 3.0f, 5.0f};
  p.dy = {kInf, 1.0f, 1.0f, 1.0f};
  p.eps = 1e-5f;
  for (const Kernel* k : {&kTextbookLayerNormBwd, &kTextbookRmsNormBwd}) {
    const Evaluation ev = evaluate(*k, p);
    EXPECT_TRUE(ev.pass) << test::describe(ev);
    EXPECT_EQ(ev.nonfinite_convention, C::ieee) << k->name;
    const Evaluation strict = evaluate_with(*k, p, NonFinite::row_nan_only);
    EXPECT_FALSE(strict.pass) << k->name;
    EXPECT_EQ(strict.worst.output, "dx") << k->name;
  }
  for (const char* name : {"layernorm_bwd.twopass", "rmsnorm_bwd.scalar"}) {
    const Evaluation ev = evaluate(*find_kernel(name), p);
    EXPECT_TRUE(ev.pass) << test::describe(ev);
    EXPECT_EQ(ev.nonfinite_convention, C::both) << name;  // NaN, which the IEEE evaluation admits
  }
}

// ---- negative controls: hiding the fault, inventing one ----

// The textbook forward with every non-finite y replaced by 0 (a nan_to_num).
void hides_y(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
             int64_t rows, int64_t cols, float eps) {
  my_layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  for (int64_t i = 0; i < rows * cols; ++i)
    if (!std::isfinite(y[i])) y[i] = 0;
}

// RMSNorm that reports rrms = 1 for a row of infinities, finite where the
// IEEE evaluation gives +0 (y stays the IEEE one).
void rrms_one(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols, float eps) {
  textbook_rmsnorm_fwd(x, gamma, y, rrms, rows, cols, eps);
  for (int64_t r = 0; r < rows; ++r)
    if (rrms[r] == 0) rrms[r] = 1;
}

// The textbook forward that reports a mean of 0 for a row it cannot average.
void hides_mean(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                int64_t rows, int64_t cols, float eps) {
  my_layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  for (int64_t r = 0; r < rows; ++r)
    if (!std::isfinite(mean[r])) mean[r] = 0;
}

// RMSNorm without the rrms of a row of infinities: y = x gamma there, finite
// where the IEEE evaluation gives 0.
void ignores_rrms(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                  float eps) {
  textbook_rmsnorm_fwd(x, gamma, y, rrms, rows, cols, eps);
  for (int64_t r = 0; r < rows; ++r)
    if (rrms[r] == 0)
      for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + j] * at(gamma, j, 1);
}

// RMSNorm with NaN replaced by 0: finite where the IEEE evaluation is inf * 0 = NaN.
void zeroes_nan(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols, float eps) {
  textbook_rmsnorm_fwd(x, gamma, y, rrms, rows, cols, eps);
  for (int64_t i = 0; i < rows * cols; ++i)
    if (std::isnan(y[i])) y[i] = 0;
}

// The textbook backward with every non-finite dx replaced by 0.
void hides_dx(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd, float* dx,
              float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  textbook_layernorm_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    if (!std::isfinite(dx[i])) dx[i] = 0;
}

// The textbook kernels with a NaN, or an infinity, on row 0 (finite inputs).
void invents_nan_y(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                   int64_t rows, int64_t cols, float eps) {
  my_layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  y[0] = kNaN;
}

void invents_inf_y(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                   float eps) {
  textbook_rmsnorm_fwd(x, gamma, y, rrms, rows, cols, eps);
  y[0] = -kInf;
}

void invents_nan_dx(const float* dy, const float* x, const float* gamma, const float* rrms, float* dx,
                    float* dgamma, int64_t rows, int64_t cols) {
  textbook_rmsnorm_bwd(dy, x, gamma, rrms, dx, dgamma, rows, cols);
  dx[0] = kNaN;
}

struct Control {
  Kernel kernel;
  const char* output;  // the output flagged
  bool on_finite_row;  // the element flagged is on row 0 (finite inputs), else on a row with a non-finite input
};

TEST(EvaluateNonFiniteNegative, HidingOrInventingAFaultIsCaught) {
  const Control controls[] = {
      {textbook("hides_y", Op::layernorm_fwd, &hides_y, &twopass_layernorm_fwd_bound), "y", false},
      {textbook("rrms_one", Op::rmsnorm_fwd, &rrms_one, &rmsnorm_fwd_bound), "rrms", false},
      {textbook("hides_mean", Op::layernorm_fwd, &hides_mean, &twopass_layernorm_fwd_bound), "mean", false},
      {textbook("ignores_rrms", Op::rmsnorm_fwd, &ignores_rrms, &rmsnorm_fwd_bound), "y", false},
      {textbook("zeroes_nan", Op::rmsnorm_fwd, &zeroes_nan, &rmsnorm_fwd_bound), "y", false},
      {textbook("hides_dx", Op::layernorm_bwd, &hides_dx, &twopass_layernorm_bwd_bound), "dx", false},
      {textbook("invents_nan_y", Op::layernorm_fwd, &invents_nan_y, &twopass_layernorm_fwd_bound), "y", true},
      {textbook("invents_inf_y", Op::rmsnorm_fwd, &invents_inf_y, &rmsnorm_fwd_bound), "y", true},
      {textbook("invents_nan_dx", Op::rmsnorm_bwd, &invents_nan_dx, &rmsnorm_bwd_bound), "dx", true},
  };
  for (const Control& c : controls)
    for (const uint64_t seed : seeds())
      for (const int64_t cols : {2, 17}) {
        std::mt19937_64 rng(seed);
        const Problem p = problem(rng, c.kernel.op, cols, true, 1e-5f);
        const std::string where = std::string(c.kernel.name) + " seed " + std::to_string(seed) + " d " +
                                  std::to_string(cols);
        const Evaluation ev = evaluate(c.kernel, p);
        EXPECT_FALSE(ev.pass) << where;
        EXPECT_TRUE(ev.nonfinite_mismatch) << where;
        EXPECT_EQ(ev.worst.output, c.output) << where << ": " << test::describe(ev);
        EXPECT_EQ(ev.worst.row == 0, c.on_finite_row) << where << ": " << test::describe(ev);
        // the mean and the inventions are not part of the convention; the others are neither
        if (!c.on_finite_row && std::string(c.output) != "mean") {
          EXPECT_EQ(ev.nonfinite_convention, C::neither) << where;
        }
        // the strict rule catches them too (some first at an element where they follow IEEE)
        const Evaluation strict = evaluate_with(c.kernel, p, NonFinite::row_nan_only);
        EXPECT_FALSE(strict.pass) << where;
        EXPECT_TRUE(strict.nonfinite_mismatch) << where;
      }
}

// ---- the convention's algebra ----

TEST(EvaluateNonFinite, ConventionsCombine) {
  const C all[] = {C::none, C::both, C::row_nan, C::ieee, C::mixed, C::neither};
  for (const C a : all) {
    EXPECT_EQ(combine(C::none, a), a);
    EXPECT_EQ(combine(a, a), a);
    EXPECT_EQ(combine(C::neither, a), C::neither);
    for (const C b : all) {
      EXPECT_EQ(combine(a, b), combine(b, a));
      for (const C c : all) EXPECT_EQ(combine(combine(a, b), c), combine(a, combine(b, c)));
    }
  }
  EXPECT_EQ(combine(C::both, C::row_nan), C::row_nan);
  EXPECT_EQ(combine(C::both, C::ieee), C::ieee);
  EXPECT_EQ(combine(C::row_nan, C::ieee), C::mixed);
  EXPECT_EQ(combine(C::mixed, C::row_nan), C::mixed);
  EXPECT_EQ(to_string(C::row_nan), "row-NaN");
  EXPECT_EQ(to_string(C::ieee), "IEEE");
}

// A problem without a non-finite input says none.
TEST(EvaluateNonFinite, FiniteProblemsHaveNoConvention) {
  std::mt19937_64 rng(test::test_seed());
  Problem p = problem(rng, Op::layernorm_fwd, 17, true, 1e-5f);
  for (float& v : p.x)
    if (!std::isfinite(v)) v = 1;
  EXPECT_EQ(evaluate(kTextbookLayerNormFwd, p).nonfinite_convention, C::none);
}

}  // namespace
}  // namespace normcheck
