// evaluate() catches each way a kernel can be wrong: deliberately bad kernels
// defined here (one past the end, an element left unwritten, x modified, one
// value just above its allowance) each fail for their reason, while a kernel
// that returns the correctly rounded reference passes; and its ULP figure is
// taken against the row's scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/kernel.h"
#include "normcheck/reference.h"
#include "normcheck/invoke.h"
#include "same_figures.h"
#include "simd/thread_pool.h"

namespace normcheck {
namespace {

// What the test kernels return: the reference correctly rounded, with one y
// element replaced when bad_index >= 0.
struct Planted {
  std::vector<float> y, mean, rstd;
  std::size_t bad_index = SIZE_MAX;
  float bad_value = 0;
} planted;

void plant(const Problem& p) {
  const LayerNormFwdReference ref =
      reference_layernorm_fwd(p.x, p.gamma, p.beta, p.rows, p.cols, p.eps);
  planted = {ref.y.rounded, ref.mean.rounded, ref.rstd.rounded};
}

void write_planted(float* y, float* mean, float* rstd, int64_t rows, int64_t cols) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows * cols); ++i)
    y[i] = i == planted.bad_index ? planted.bad_value : planted.y[i];
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    if (mean) mean[r] = planted.mean[r];
    if (rstd) rstd[r] = planted.rstd[r];
  }
}

void exact_kernel(const float*, const float*, const float*, float* y, float* mean, float* rstd,
                  int64_t rows, int64_t cols, float) {
  write_planted(y, mean, rstd, rows, cols);
}

void writes_one_past_the_end(const float*, const float*, const float*, float* y, float* mean,
                             float* rstd, int64_t rows, int64_t cols, float) {
  write_planted(y, mean, rstd, rows, cols);
  y[rows * cols] = y[rows * cols - 1];
}

void leaves_one_unwritten(const float*, const float*, const float*, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float) {
  std::vector<float> all(static_cast<std::size_t>(rows * cols));
  write_planted(all.data(), mean, rstd, rows, cols);
  std::copy(all.begin(), all.end() - 1, y);
}

void modifies_x(const float* x, const float*, const float*, float* y, float* mean, float* rstd,
                int64_t rows, int64_t cols, float) {
  write_planted(y, mean, rstd, rows, cols);
  const_cast<float*>(x)[0] += 1.0f;
}

Kernel test_kernel(nc_layernorm_fwd_fn fn) {
  return Kernel{.name = "test.layernorm_fwd", .op = Op::layernorm_fwd, .origin = Origin::ours,
                .dtype = DType::f32, .algorithm = "test", .fn = fn,
                .bound = &twopass_layernorm_fwd_bound};
}

Problem problem() {
  std::mt19937_64 rng(test::fixed_seed(3));
  Problem p = test::shifted_normal_rows(rng, 3, 64, 5.0f, 2.0f, 1e-5f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int j = 0; j < 64; ++j) {
    p.gamma.push_back(1.0f + normal(rng));
    p.beta.push_back(normal(rng));
  }
  p.misalign_floats = 1;
  return p;
}

// evaluate() of the kernel `fn` on problem(), with the exact outputs planted.
Evaluation evaluate_planted(nc_layernorm_fwd_fn fn) {
  const Problem p = problem();
  plant(p);
  return evaluate(test_kernel(fn), p);
}

TEST(Evaluate, CorrectlyRoundedReferencePasses) {
  const Evaluation ev = evaluate_planted(&exact_kernel);
  EXPECT_TRUE(ev.pass) << test::describe(ev);
  EXPECT_LE(ev.max_ulp, 0.5);  // correctly rounded: at most half an ulp from the exact value
  EXPECT_FALSE(ev.worst.output.empty());
}

TEST(Evaluate, CatchesAWriteOnePastTheEnd) {
  const Evaluation ev = evaluate_planted(&writes_one_past_the_end);
  EXPECT_TRUE(ev.out_of_bounds_write);
  EXPECT_FALSE(ev.pass);
}

TEST(Evaluate, CatchesAnUnwrittenElement) {
  const Evaluation ev = evaluate_planted(&leaves_one_unwritten);
  EXPECT_TRUE(ev.unwritten_output);
  EXPECT_FALSE(ev.out_of_bounds_write);
  EXPECT_FALSE(ev.pass);
}

TEST(Evaluate, CatchesAWriteToTheInput) {
  const Evaluation ev = evaluate_planted(&modifies_x);
  EXPECT_TRUE(ev.wrote_input);
  EXPECT_FALSE(ev.pass);
}

// One y element moved to 1.2 (then 0.8) times its allowance from the exact
// value: the first fails with a ratio just above 1 and names that element,
// the second passes. The allowance is computed the way evaluate() documents
// (twopass bound at the row's exact condition).
TEST(Evaluate, ValueJustAboveTheBoundFailsJustBelowPasses) {
  const Problem p = problem();
  const LayerNormFwdReference ref =
      reference_layernorm_fwd(p.x, p.gamma, p.beta, p.rows, p.cols, p.eps);
  const std::size_t index = 64 + 17;  // row 1, col 17
  const Bound b = twopass_layernorm_fwd_bound(row_condition(ref.stats[1]));
  const double allowed = y_allowance(b, p.gamma[17], p.beta[17], ref.xhat.exact[index]);
  const double exact = ref.y.exact[index];
  // Rounding exact + 1.2 (0.8) allowances to float moves the ratio by at most
  // spacing / allowance < 0.05 when the allowance spans 20 float spacings.
  ASSERT_GT(allowed, 20 * std::fabs(std::nextafter(static_cast<float>(exact), INFINITY) - exact));

  plant(p);
  planted.bad_index = index;
  planted.bad_value = static_cast<float>(exact + 1.2 * allowed);
  const Evaluation above = evaluate(test_kernel(&exact_kernel), p);
  EXPECT_FALSE(above.pass);
  EXPECT_GT(above.max_error_over_bound, 1.0);
  EXPECT_LT(above.max_error_over_bound, 1.3);
  EXPECT_EQ(above.worst.output, "y");
  EXPECT_EQ(above.worst.row, 1);
  EXPECT_EQ(above.worst.col, 17);

  planted.bad_value = static_cast<float>(exact - 0.8 * allowed);
  const Evaluation below = evaluate(test_kernel(&exact_kernel), p);
  EXPECT_TRUE(below.pass) << test::describe(below);
  EXPECT_GT(below.max_error_over_bound, 0.7);
}

TEST(Evaluate, NaNWhereTheReferenceIsFiniteFails) {
  const Problem p = problem();
  plant(p);
  planted.bad_index = 5;
  planted.bad_value = NAN;
  const Evaluation ev = evaluate(test_kernel(&exact_kernel), p);
  EXPECT_TRUE(ev.nonfinite_mismatch);
  EXPECT_FALSE(ev.pass);
}

// A bf16 kernel: two-pass in float on the widened input, y rounded to bf16.
void twopass_bf16(const uint16_t* x, const float* gamma, const float* beta, uint16_t* y,
                  float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  std::vector<float> wide(static_cast<std::size_t>(rows * cols)), out(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i)
    wide[i] = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
  invoke(*find_kernel("layernorm_fwd.twopass"), {.rows = rows, .cols = cols, .eps = eps, .x = wide.data(),
                                                 .gamma = gamma, .beta = beta, .out = out.data(),
                                                 .mean = mean, .stat = rstd});
  for (std::size_t i = 0; i < out.size(); ++i) {  // round to nearest even
    const uint32_t bits = std::bit_cast<uint32_t>(out[i]);
    y[i] = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
  }
}

// Its bound: two-pass's, then one rounding to bf16 (8 significant bits: unit
// roundoff 2^-8; underflow 2^-134, half bf16's smallest subnormal):
// |y16 - y| <= (1 + 2^-8) |y^ - y| + 2^-8 (|gamma xhat| + |beta|) + 2^-134.
Bound twopass_bf16_bound(const RowCondition& c) {
  constexpr double u = kBf16Format.unit_roundoff(), eta = kBf16Format.half_smallest_subnormal();
  Bound b = twopass_layernorm_fwd_bound(c);
  b.xhat_abs *= 1 + u;
  b.xhat_rel *= 1 + u;
  b.affine_rel = b.affine_rel * (1 + u) + u;
  b.underflow_abs = b.underflow_abs * (1 + u) + eta;
  return b;
}

TEST(Evaluate, Bf16KernelIsMeasuredInBf16Ulps) {
  const Kernel k{.name = "test.layernorm_fwd_bf16", .op = Op::layernorm_fwd,
                 .origin = Origin::ours, .dtype = DType::bf16, .algorithm = "test",
                 .fn = &twopass_bf16, .bound = &twopass_bf16_bound};
  const Evaluation ev = evaluate(k, problem());
  EXPECT_TRUE(ev.pass) << test::describe(ev);
  // Rounding to bf16 costs half a bf16 ulp; two-pass's own error is a few
  // float ulps, i.e. far below another bf16 ulp.
  EXPECT_LE(ev.max_ulp, 1.0);
  EXPECT_GT(ev.max_ulp, 0.0);
}

// The largest ULP distance of the kept main elements that evaluate() held to
// an allowance (each element's own ULP, near zero included).
double plain_max_ulp(const Evaluation& ev, DType t) {
  double worst = 0;
  for (const MainElement& m : ev.main_elements)
    if (std::isfinite(m.allowed) && std::isfinite(m.computed)) worst = std::max(worst, ulp_error(t, m.computed, m.exact));
  return worst;
}

Evaluation keeping_elements(const Kernel& k, const Problem& p) {
  EvaluateOptions options;
  options.keep_main_elements = true;
  return evaluate(k, p, options);
}

// Near an output's zero one ULP of the exact value is tiny: twopass's y on a
// constant row with eps > 0 (exact y = 0) is off by its float mean's rounding
// times 1/sqrt(eps), billions of its own ULPs, within its bound. Evaluation::
// max_ulp takes a ULP no smaller than one of the row's scale, |gamma| kappa +
// |beta| (verify/evaluate/scale.h), where that error is a few ULPs.
TEST(Evaluate, UlpFigureIsTakenAgainstTheRowsScale) {
  const Kernel& twopass = *find_kernel("layernorm_fwd.twopass");
  Problem p;
  p.rows = 1;
  p.cols = 7;
  p.eps = 1e-5f;
  bool found = false;
  for (float c = 0.1f; c < 1 && !found; c = std::nextafter(c + 0.01f, 1.0f)) {
    p.x.assign(7, c);  // the float mean of seven equal values need not be c
    const Evaluation ev = keeping_elements(twopass, p);
    if (plain_max_ulp(ev, DType::f32) < 0x1p20) continue;
    found = true;
    EXPECT_TRUE(ev.pass) << test::describe(ev);
    EXPECT_LE(ev.max_ulp, 4.0) << "c = " << c;
  }
  ASSERT_TRUE(found) << "no constant row where twopass's float mean is off";
}

// The negative control of the scaled figure: an error of 1000 ULPs of the
// row's scale planted on the element of row 1 nearest zero shows as 1000 (up
// to the float rounding of the planted value). The bound is widened so the
// element stays within it.
Bound generous_bound(const RowCondition& c) {
  Bound b = twopass_layernorm_fwd_bound(c);
  b.xhat_abs += 1e-3;
  return b;
}

TEST(Evaluate, UlpFigureSeesErrorsAgainstTheRowsScale) {
  const Problem p = problem();
  const LayerNormFwdReference ref = reference_layernorm_fwd(p.x, p.gamma, p.beta, p.rows, p.cols, p.eps);
  const Kernel k{.name = "test.layernorm_fwd", .op = Op::layernorm_fwd, .origin = Origin::ours, .dtype = DType::f32,
                 .algorithm = "test", .fn = &exact_kernel, .bound = &generous_bound};
  std::size_t col = 0;
  for (std::size_t j = 1; j < 64; ++j)
    if (std::fabs(ref.y.exact[64 + j]) < std::fabs(ref.y.exact[64 + col])) col = j;
  const double scale = std::fabs(p.gamma[col]) * ref.stats[1].condition.kappa + std::fabs(p.beta[col]);
  ASSERT_LT(std::fabs(ref.y.exact[64 + col]), scale / 4);  // below the scale: its own ULP would say more
  plant(p);
  planted.bad_index = 64 + col;
  planted.bad_value = static_cast<float>(ref.y.exact[64 + col] + 1000 * spacing(DType::f32, scale));
  const Evaluation ev = evaluate(k, p);
  EXPECT_TRUE(ev.pass) << test::describe(ev);
  EXPECT_NEAR(ev.max_ulp, 1000.0, 1.0);
}

// A NaN or inf the bound admits (here: nothing is promised on a row whose
// r = 1/sigma exceeds FLT_MAX, where twopass's rstd is inf and its y NaN)
// carries no ULP figure: never an infinite max ULP beside a pass.
TEST(Evaluate, NoInfiniteUlpBesideAPass) {
  Problem p;
  p.rows = 1;
  p.cols = 3;
  p.eps = 0;
  p.x = {0x1p-106f, 0x1p-106f, std::nextafter(0x1p-106f, 1.0f)};  // sigma ~ 2^-130: r ~ 2^130
  const Evaluation ev = evaluate(*find_kernel("layernorm_fwd.twopass"), p);
  ASSERT_TRUE(ev.pass) << test::describe(ev);
  EXPECT_FALSE(std::isfinite(reference_layernorm_fwd(p.x, {}, {}, 1, 3, 0).rstd.rounded[0]));
  EXPECT_TRUE(std::isfinite(ev.max_ulp)) << ev.max_ulp;
}

// evaluate() compares the rows of a problem in chunks on the kernels' thread
// pool and merges them in row order (forward and backward): every figure,
// the worst element and the count of elements outside a candidate policy's
// range (identify) are those of one pass over the rows in order, whatever
// the thread count. Rows with |mean|/sigma ~ 1e3 make the one-pass control fail; a problem of 37
// copies of one row gives every row the same worst ratio, so only an
// order-keeping merge names row 0 (the first of equal ratios, as one pass
// does) with several threads. Negative control, run by editing merge_tally
// (verify/evaluate/tally.cpp) to take a later chunk's equal ratio (>= for >):
// the copies problem then names row 27 or 33, forward and backward, and this
// test fails.
TEST(Evaluate, ResultsDoNotDependOnTheThreadCount) {
  const int threads_before = simd::thread_count();
  Problem varied, copies, centred;
  // 37 x 512 elements: above simd::kParallelCheckElements, so the rows are checked in chunks
  varied.rows = copies.rows = centred.rows = 37;
  varied.cols = copies.cols = centred.cols = 512;
  ASSERT_GE(varied.rows * varied.cols, simd::kParallelCheckElements);
  for (int64_t i = 0; i < varied.rows * varied.cols; ++i) {
    varied.x.push_back(static_cast<float>(1e4 + static_cast<double>((i * 7919) % 1000) / 100));
    copies.x.push_back(static_cast<float>(1e4 + static_cast<double>((i % 512) * 7919 % 1000) / 100));
    // dy for the backward kernels (the forward ones leave it): the same pattern, per problem
    varied.dy.push_back(static_cast<float>(static_cast<double>((i * 104729) % 2001) / 1000 - 1));
    copies.dy.push_back(static_cast<float>(static_cast<double>((i % 512) * 104729 % 2001) / 1000 - 1));
    // rows around 0: realistic (evaluate.h, realistic_row), so a forward is also held to the tight standard
    centred.x.push_back(static_cast<float>(static_cast<double>((i * 7919) % 1000) / 100 - 5));
    centred.dy.push_back(varied.dy.back());
  }
  EvaluateOptions identify;
  identify.identify = true;
  for (const char* name : {"layernorm_fwd.naive_onepass", "layernorm_fwd.twopass", "rmsnorm_fwd.scalar",
                           "layernorm_bwd.naive_onepass", "layernorm_bwd.twopass", "rmsnorm_bwd.scalar"})
    for (const Problem* p : {&varied, &copies, &centred}) {
      const Kernel* k = find_kernel(name);
      ASSERT_NE(k, nullptr) << name;
      simd::set_thread_count(1);
      const Evaluation one = evaluate(*k, *p, identify);
      simd::set_thread_count(3);
      const Evaluation three = evaluate(*k, *p, identify);
      simd::set_thread_count(threads_before);
      const std::string where =
          std::string(name) + (p == &copies ? ", copies" : p == &centred ? ", centred" : ", varied");
      // every element figure, the worst element and every output's entry in the order first met
      EXPECT_FALSE(one.outputs.empty()) << where;
      test::expect_same_figures(one, three, where);
      EXPECT_EQ(one.normwise, three.normwise) << where;
      EXPECT_EQ(one.pass, three.pass) << where;
      // the tight standard's figures, taken beside the bound's in the same chunks (forward)
      const bool tight = (k->op == Op::layernorm_fwd || k->op == Op::rmsnorm_fwd) &&
                         tight_bound(k->bound ? k->bound : default_bound(k->op)) != nullptr;
      if (tight && p == &centred) EXPECT_EQ(one.tight_rows, centred.rows) << where;
      EXPECT_EQ(one.tight_rows, three.tight_rows) << where;
      EXPECT_EQ(one.max_error_over_tight, three.max_error_over_tight) << where;
      EXPECT_EQ(one.tight_worst.output, three.tight_worst.output) << where;
      EXPECT_EQ(one.tight_worst.row, three.tight_worst.row) << where;
      EXPECT_EQ(one.tight_worst.col, three.tight_worst.col) << where;
      EXPECT_EQ(one.tight_worst.exact, three.tight_worst.exact) << where;
      EXPECT_EQ(one.tight_worst.allowed, three.tight_worst.allowed) << where;
      if (p == &copies) {  // the main output's (a backward's worst may be a dgamma column, row -1)
        const char* main = k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd ? "dx" : "y";
        const auto it = std::find_if(three.outputs.begin(), three.outputs.end(),
                                     [&](const OutputError& o) { return o.output == main; });
        ASSERT_NE(it, three.outputs.end()) << where;
        EXPECT_EQ(it->row, 0) << where;
      }
      EXPECT_EQ(one.policy_exact_math_ulp, three.policy_exact_math_ulp) << where;
      EXPECT_FALSE(one.policy_fits.empty()) << where;
      ASSERT_EQ(one.policy_fits.size(), three.policy_fits.size()) << where;
      for (std::size_t f = 0; f < one.policy_fits.size(); ++f) {
        const Evaluation::PolicyFit &a = one.policy_fits[f], &b = three.policy_fits[f];
        EXPECT_EQ(a.spec, b.spec) << where;
        EXPECT_EQ(a.outside, b.outside) << where << " " << a.spec;
        // NaN for a backward policy (evaluate.h)
        EXPECT_TRUE(a.exact_math_ulp == b.exact_math_ulp || (std::isnan(a.exact_math_ulp) && std::isnan(b.exact_math_ulp)))
            << where << " " << a.spec;
      }
    }
  EXPECT_FALSE(evaluate(*find_kernel("layernorm_fwd.naive_onepass"), varied).pass);
}

}  // namespace
}  // namespace normcheck
