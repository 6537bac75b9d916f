// evaluate()'s rules for what a backward bound promises (evaluate.h,
// docs/semantics.md "What evaluate() promises"):
//   - a backward row whose saved statistic fl(r) is not within u of r
//     (r outside [2^-126, 2^128 - 2^103)) is not checked, nor is dgamma then;
//   - a +inf coefficient promises nothing for its output, NaN/inf placement included;
//   - a row with a non-finite input is held to the non-finite rule whatever
//     the bound (test_evaluate_nonfinite.cpp has the rule itself);
//   - an infinite dy_j on an xhat_j within the bound's error of 0 (e.g.
//     x_j == fl(mu) != mu): dgamma_j is non-finite, of a kind the bound does
//     not fix;
//   - an infinity is admitted where exact +- allowance leaves the float range;
// and layernorm_bwd.pytorch_form's bound promises nothing exactly on rows where
// the kernel's intermediates really overflow. Each rule comes with a control:
// what the rule does not excuse is still caught.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/reference.h"
#include "normcheck/invoke.h"

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// layernorm_bwd.twopass, called with the ABI's arguments.
void twopass_bwd(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                 float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  invoke(*find_kernel("layernorm_bwd.twopass"),
         {.rows = rows, .cols = cols, .x = x, .dy = dy, .gamma = gamma, .saved_mean = mean, .saved_stat = rstd,
          .out = dx, .dgamma = dgamma, .dbeta = dbeta});
}

Kernel test_kernel(nc_layernorm_bwd_fn fn, BoundFn bound) {
  return Kernel{.name = "test.layernorm_bwd", .op = Op::layernorm_bwd, .origin = Origin::ours,
                .dtype = DType::f32, .algorithm = "test", .fn = fn, .bound = bound};
}

Problem backward_problem(std::vector<float> x, std::vector<float> dy, std::vector<float> gamma,
                         float eps) {
  Problem p;
  p.rows = 1;
  p.cols = static_cast<int64_t>(x.size());
  p.x = std::move(x);
  p.dy = std::move(dy);
  p.gamma = std::move(gamma);
  p.eps = eps;
  return p;
}

std::string describe(const Evaluation& e) {
  return e.worst.output + "[" + std::to_string(e.worst.row) + "," + std::to_string(e.worst.col) +
         "] ratio " + std::to_string(e.max_error_over_bound);
}

TEST(BackwardRules, SavedStatisticThresholds) {
  RowStats s;
  const auto checked = [&](Op op, double r) {
    s.r = r;
    return row_checked(op, s);
  };
  // fl(r) = r (1 + rho), |rho| <= u, exactly on [2^-126, 2^128 - 2^103).
  EXPECT_TRUE(checked(Op::layernorm_bwd, 0x1p-126));
  EXPECT_FALSE(checked(Op::layernorm_bwd, std::nextafter(0x1p-126, 0.0)));
  EXPECT_TRUE(checked(Op::rmsnorm_bwd, std::nextafter(0x1p128 - 0x1p103, 0.0)));
  EXPECT_FALSE(checked(Op::rmsnorm_bwd, 0x1p128 - 0x1p103));
  // The forward computes r itself: only the ill-posed row is skipped.
  EXPECT_TRUE(checked(Op::layernorm_fwd, 0x1p150));
  EXPECT_FALSE(checked(Op::layernorm_fwd, kInf));
  // A row with non-finite input is checked (by the non-finite rule).
  s.finite = false;
  EXPECT_TRUE(checked(Op::layernorm_bwd, std::numeric_limits<double>::quiet_NaN()));
}

// twopass, then dbeta off by one: dbeta does not depend on the saved rstd, so
// the rule must not excuse it.
void twopass_with_bad_dbeta(const float* dy, const float* x, const float* gamma, const float* mean,
                            const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                            int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  dbeta[0] += 1.0f;
}

TEST(BackwardRules, RowWithInfiniteSavedRstdIsNotChecked) {
  // sigma = 2^-150, r = 2^150: the saved rstd is +inf, every kernel's dx is
  // inf * 0 = NaN and its dgamma NaN, while the exact dx is 0.
  const Problem p = backward_problem({0.0f, 0x1p-149f}, {0.0f, 0.0f}, {}, 0.0f);
  ASSERT_TRUE(std::isinf(reference_layernorm_fwd(p.x, {}, {}, 1, 2, 0.0f).rstd.rounded[0]));
  for (const char* name : {"layernorm_bwd.twopass", "layernorm_bwd.pytorch_form"}) {
    const Evaluation ev = evaluate(*find_kernel(name), p);
    EXPECT_TRUE(ev.pass) << name << ": " << describe(ev);
  }
  const Evaluation bad = evaluate(test_kernel(&twopass_with_bad_dbeta, &twopass_layernorm_bwd_bound), p);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.worst.output, "dbeta");
}

TEST(BackwardRules, RmsRowWithInfiniteSavedRrmsIsNotChecked) {
  Problem p = backward_problem({0x1p-149f}, {1.0f}, {}, 0.0f);  // rrms = 2^149
  ASSERT_TRUE(std::isinf(reference_rmsnorm_fwd(p.x, {}, 1, 1, 0.0f).rrms.rounded[0]));
  const Evaluation ev = evaluate(*find_kernel("rmsnorm_bwd.scalar"), p);
  EXPECT_TRUE(ev.pass) << describe(ev);
}

// twopass, then every dgamma NaN; and twopass with dx zeroed.
void twopass_nan_dgamma(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                        int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  for (int64_t j = 0; j < cols; ++j) dgamma[j] = std::numeric_limits<float>::quiet_NaN();
}

void twopass_zero_dx(const float* dy, const float* x, const float* gamma, const float* mean,
                     const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                     int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) dx[i] = 0.0f;
}

void twopass_nan_dx(const float* dy, const float* x, const float* gamma, const float* mean,
                    const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                    int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  dx[0] = std::numeric_limits<float>::quiet_NaN();
}

Bound twopass_no_dgamma_promise(const RowCondition& c) {
  Bound b = twopass_layernorm_bwd_bound(c);
  b.dgamma_rel = kInf;
  return b;
}

Bound twopass_no_dx_promise(const RowCondition& c) {
  Bound b = twopass_layernorm_bwd_bound(c);
  b.dx_g = kInf;
  return b;
}

TEST(BackwardRules, InfiniteCoefficientPromisesNothingNotEvenNaNPlacement) {
  // dy_0 = inf: the exact dgamma_0 = inf * xhat_0 = -inf, dx all NaN.
  const Problem p = backward_problem({1.0f, 2.0f, 3.0f, 5.0f}, {INFINITY, 1.0f, 1.0f, 1.0f}, {}, 1e-5f);
  const Evaluation held = evaluate(test_kernel(&twopass_nan_dgamma, &twopass_layernorm_bwd_bound), p);
  EXPECT_FALSE(held.pass);
  EXPECT_TRUE(held.nonfinite_mismatch);
  const Evaluation excused = evaluate(test_kernel(&twopass_nan_dgamma, &twopass_no_dgamma_promise), p);
  EXPECT_TRUE(excused.pass) << describe(excused);
}

// dx zeroed on a row with an infinite dy: finite where every convention is
// non-finite, caught although the bound promises nothing for dx.
TEST(BackwardRules, NonFiniteRowIsHeldWhateverTheBound) {
  const Problem p = backward_problem({1.0f, 2.0f, 3.0f, 5.0f}, {INFINITY, 1.0f, 1.0f, 1.0f}, {}, 1e-5f);
  const Evaluation ev = evaluate(test_kernel(&twopass_zero_dx, &twopass_no_dx_promise), p);
  EXPECT_FALSE(ev.pass);
  EXPECT_TRUE(ev.nonfinite_mismatch);
  EXPECT_EQ(ev.worst.output, "dx");
}

// The kernel's dx and dgamma on p, from the correctly rounded saved statistics.
struct Outputs {
  std::vector<float> dx, dgamma, dbeta;
};
Outputs run(const Kernel& k, const Problem& p) {
  const auto saved = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
  Outputs o{std::vector<float>(p.x.size()), std::vector<float>(p.x.size()), std::vector<float>(p.x.size())};
  invoke(k, {.rows = p.rows, .cols = p.cols, .x = p.x.data(), .dy = p.dy.data(),
             .gamma = p.gamma.empty() ? nullptr : p.gamma.data(), .saved_mean = saved.mean.rounded.data(),
             .saved_stat = saved.rstd.rounded.data(), .out = o.dx.data(), .dgamma = o.dgamma.data(),
             .dbeta = o.dbeta.data()});
  return o;
}

bool all_finite(const std::vector<float>& v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

// twopass with dgamma's signs flipped.
void twopass_negated_dgamma(const float* dy, const float* x, const float* gamma, const float* mean,
                            const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                            int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  for (int64_t j = 0; j < cols; ++j) dgamma[j] = -dgamma[j];
}

// twopass, then dgamma_0 = 0: finite where the exact dgamma_0 is an infinity.
void twopass_zero_dgamma0(const float* dy, const float* x, const float* gamma, const float* mean,
                          const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols) {
  twopass_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
  dgamma[0] = 0.0f;
}

TEST(BackwardRules, InfiniteDyOnAnXhatOfUnknownSignPromisesANonFiniteValue) {
  // mu = 1 + 2^-25, fl(mu) = 1 = x_0: the exact xhat_0 = -2^-25 r < 0 and
  // dgamma_0 = -inf, but every kernel sees x_0 - mean^ = 0 and computes
  // inf * 0 = NaN (|xhat_0| is below the bound's u kappa): any NaN or
  // infinity is admitted there, a finite value is not. xhat_3 = 3 2^-25 r is
  // far from 0: dgamma_3 = +inf is held exactly.
  const Problem p = backward_problem({1.0f, 1.0f, 1.0f, std::nextafter(1.0f, 2.0f)},
                                     {INFINITY, 0.0f, 0.0f, INFINITY}, {}, 1e-5f);
  for (const char* name : {"layernorm_bwd.twopass", "layernorm_bwd.pytorch_form"}) {
    const Evaluation ev = evaluate(*find_kernel(name), p);
    EXPECT_TRUE(ev.pass) << name << ": " << describe(ev);
  }
  const Evaluation bad = evaluate(test_kernel(&twopass_negated_dgamma, &twopass_layernorm_bwd_bound), p);
  EXPECT_FALSE(bad.pass);
  EXPECT_EQ(bad.worst.output, "dgamma");
  EXPECT_EQ(bad.worst.col, 3);
  const Evaluation hides = evaluate(test_kernel(&twopass_zero_dgamma0, &twopass_layernorm_bwd_bound), p);
  EXPECT_FALSE(hides.pass);
  EXPECT_TRUE(hides.nonfinite_mismatch);
  EXPECT_EQ(hides.worst.output, "dgamma");
  EXPECT_EQ(hides.worst.col, 0);
}

// The exact dx is ~2^-104, but the saved mean's rounding is 0.7 in xhat units
// (u kappa ~ 1) and r ~ 2^103, so the bound allows 2^131: a computation within
// it may overflow, and twopass's does (r^ times an inner value ~ 2^28). The
// allowance reaching beyond FLT_MAX admits the infinity; NaN is still caught.
TEST(BackwardRules, InfinityAdmittedWhereTheAllowanceLeavesTheFloatRange) {
  const float a = 0x1.29efb8p-79f;
  const Problem p = backward_problem({a, a, std::nextafter(a, 1.0f)}, {0.0f, 0.0f, 0x1p12f},
                                     {0.0f, 0.0f, 0x1p16f}, 0.0f);
  ASSERT_TRUE(std::isinf(run(*find_kernel("layernorm_bwd.twopass"), p).dx[0]));
  const Evaluation ev = evaluate(*find_kernel("layernorm_bwd.twopass"), p);
  EXPECT_TRUE(ev.pass) << describe(ev);
  const Evaluation nan = evaluate(test_kernel(&twopass_nan_dx, &twopass_layernorm_bwd_bound), p);
  EXPECT_FALSE(nan.pass);
  EXPECT_TRUE(nan.nonfinite_mismatch);
}

Bound pytorch_bound_of(const Problem& p) {
  const auto ref = reference_layernorm_bwd(p.dy, p.x, p.gamma, p.rows, p.cols, p.eps);
  return find_kernel("layernorm_bwd.pytorch_form")->bound(row_condition(ref.stats[0]));
}

// The rows the property suite shrank to: the kernel's dx really is not finite
// (the exact one is), its bound says so, and evaluate() passes it.
TEST(BackwardRules, PytorchFormPromisesNothingWhereItsIntermediatesOverflow) {
  const Problem overflowing[] = {
      backward_problem({0x1p123f}, {1.0f}, {0x1p5f}, 1e-2f),           // ds = 2^128
      backward_problem({0x1p124f}, {0x1p4f}, {}, 1e-2f),               // ds = 2^128
      backward_problem({0.0f, 0x1p-62f}, {0.0f, 4.0f}, {}, 0.0f),      // K a a a = 2^128
  };
  const Kernel& pytorch_form = *find_kernel("layernorm_bwd.pytorch_form");
  for (const Problem& p : overflowing) {
    EXPECT_FALSE(all_finite(run(pytorch_form, p).dx)) << p.x[p.cols - 1];
    EXPECT_EQ(pytorch_bound_of(p).dx_g, kInf) << p.x[p.cols - 1];
    const Evaluation ev = evaluate(*find_kernel("layernorm_bwd.pytorch_form"), p);
    EXPECT_TRUE(ev.pass) << describe(ev);
  }
  // A constant row 2^110 with eps = 1e-12: r x = 2^130, so rstd*x - rstd*mean
  // is inf - inf and dgamma NaN where the exact dgamma is 0.
  const Problem constant = backward_problem({0x1p110f, 0x1p110f}, {1.0f, 1.0f}, {}, 1e-12f);
  EXPECT_FALSE(all_finite(run(pytorch_form, constant).dgamma));
  EXPECT_EQ(pytorch_bound_of(constant).dgamma_rel, kInf);
  EXPECT_TRUE(evaluate(*find_kernel("layernorm_bwd.pytorch_form"), constant).pass);
}

TEST(BackwardRules, PytorchFormPromisesOnOrdinaryRows) {
  const Problem ordinary[] = {
      backward_problem({1.0f, 2.0f, 4.0f}, {1.0f, -1.0f, 0.5f}, {}, 1e-5f),
      backward_problem({0x1p100f, -0x1p100f, 0x1p99f}, {3.0f, 1.0f, -2.0f}, {0.5f, 2.0f, 1.0f}, 0.0f),
  };
  for (const Problem& p : ordinary) {
    const Bound b = pytorch_bound_of(p);
    EXPECT_TRUE(std::isfinite(b.dx_g) && std::isfinite(b.dgamma_rel) && std::isfinite(b.dbeta_rel));
    const Evaluation ev = evaluate(*find_kernel("layernorm_bwd.pytorch_form"), p);
    EXPECT_TRUE(ev.pass) << describe(ev);
    EXPECT_GT(ev.max_error_over_bound, 0.0);  // something was measured
  }
}

// fl(rstd dy) underflows before the product by gamma = 256: an error of
// 2^-150 * 256, which the bound now covers (shrunk by the property suite).
TEST(BackwardRules, PytorchFormCoversTheUnderflowOfRstdTimesDy) {
  const Problem p = backward_problem({0.0f, 2.0f, 1.0f}, {0.0f, 0.0f, 0x1.1ae58p-130f},
                                     {0.0f, 0.0f, 256.0f}, 0x1.4f8b58p-17f);
  const Evaluation ev = evaluate(*find_kernel("layernorm_bwd.pytorch_form"), p);
  EXPECT_TRUE(ev.pass) << describe(ev);
}

// The saved mean of a subnormal row is off by up to 2^-150 absolute, not u|mu|:
// e = u kappa + 2^-150 r in the twopass bound (shrunk by the property suite).
TEST(BackwardRules, TwopassCoversASubnormalSavedMean) {
  const Problem p = backward_problem({0.0f, 0x1.598p-140f}, {0.0f, 8.0f}, {}, 0x1.47ae14p-7f);
  const Evaluation ev = evaluate(*find_kernel("layernorm_bwd.twopass"), p);
  EXPECT_TRUE(ev.pass) << describe(ev);
  EXPECT_GT(ev.max_error_over_bound, 0.5);  // the dgamma error is of the size the new term allows
}

}  // namespace
}  // namespace normcheck
