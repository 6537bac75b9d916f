// The rows of a norm followed by a Linear (kernels/fold/: layernorm_linear_fwd
// and rmsnorm_linear_fwd, unfolded and folded) held to their bounds by
// evaluate(), on random shapes (d, out_features, batch) and the folding
// families of docs/folding.md (verify/fold/families.h at float32); the
// wrong-side control must be caught; evaluate()'s rules for these ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "test_seed.h"
#include "describe_evaluation.h"
#include "fold/families.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

constexpr Op kOps[] = {Op::layernorm_linear_fwd, Op::rmsnorm_linear_fwd};

std::vector<const Kernel*> rows_of(Op op, Origin origin) {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.op == op && k.origin == origin) out.push_back(&k);
  return out;
}

fold::NormKind norm_of(Op op) { return op == Op::layernorm_linear_fwd ? fold::NormKind::layer : fold::NormKind::rms; }

std::vector<float> floats(const Eigen::VectorXd& v) { return std::vector<float>(v.data(), v.data() + v.size()); }

// A problem of `op`: the family's gamma, beta, W, b (float32 values) and
// `rows` rows of x = offset + N(0, 1), offset 0 or 3 (a row with a mean, which
// LayerNorm removes and RMSNorm keeps), eps 1e-5 or 0.
Problem family_problem(Op op, fold::Family family, int64_t rows, int64_t d, int64_t out, std::mt19937_64& rng) {
  const fold::FoldCase c = fold::make_case(family, norm_of(op), DType::f32, d, out, rng);
  Problem p;
  p.rows = rows;
  p.cols = d;
  p.eps = rng() % 2 ? 1e-5f : 0.0f;
  p.misalign_floats = static_cast<int>(rng() % 4);
  p.gamma = floats(c.gamma);
  p.beta = floats(c.beta);
  p.out_features = out;
  for (int64_t i = 0; i < out; ++i)
    for (int64_t j = 0; j < d; ++j) p.weight.push_back(static_cast<float>(c.original.w(i, j)));
  p.bias = floats(c.original.b);
  std::normal_distribution<float> n01(0, 1);
  for (int64_t r = 0; r < rows; ++r) {
    const float offset = r % 2 ? 3.0f : 0.0f;
    for (int64_t j = 0; j < d; ++j) p.x.push_back(offset + n01(rng));
  }
  return p;
}

TEST(NormLinearKernels, TableHasUnfoldedFoldedAndTheControl) {
  for (Op op : kOps) EXPECT_GE(rows_of(op, Origin::ours).size(), 2u) << to_string(op);
  EXPECT_FALSE(rows_of(Op::layernorm_linear_fwd, Origin::control).empty());
}

// The property: over random shapes and every family, every row of ours within
// its bound. Prints the largest error/bound per (row, family): the measured
// figures of docs/folding.md, and a check that the bounds are not vacuous.
TEST(NormLinearKernels, RandomShapesAndFamiliesWithinBound) {
  std::mt19937_64 rng(test::test_seed());
  std::map<std::string, double> worst;
  int cases = 0;
  for (int iteration = 0; iteration < 24; ++iteration) {
    const int64_t d = 1 + static_cast<int64_t>(rng() % 300);
    const int64_t out = 1 + static_cast<int64_t>(rng() % 16);
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 6);
    for (fold::Family family : fold::kFamilies)
      for (Op op : kOps) {
        const uint64_t seed = rng();
        for (const Kernel* k : rows_of(op, Origin::ours)) {
          std::mt19937_64 case_rng(seed);  // the same problem for every row of the op
          const Problem p = family_problem(op, family, rows, d, out, case_rng);
          const Evaluation ev = evaluate(*k, p);
          ASSERT_TRUE(ev.declined.empty()) << ev.declined;
          EXPECT_TRUE(ev.pass) << test::describe(ev) << " family " << fold::to_string(family) << " d=" << d
                               << " out=" << out << " rows=" << rows << " seed " << seed;
          double& w = worst[std::string(k->name) + " " + std::string(fold::to_string(family))];
          w = std::max(w, ev.max_error_over_bound);
          ++cases;
        }
      }
  }
  for (const auto& [name, ratio] : worst) std::printf("max error/bound %-50s %.3g\n", name.c_str(), ratio);
  // Not vacuous: on typical weights the unfolded and folded rows come within
  // 1% of their bounds somewhere (the bound is a worst case over d roundings;
  // the measured maxima are printed above).
  for (Op op : kOps)
    for (const Kernel* k : rows_of(op, Origin::ours))
      EXPECT_GT(worst[std::string(k->name) + " random"], 0.01) << k->name;
  EXPECT_GT(cases, 0);
}

// The negative control, gamma folded on the wrong side: caught on every
// problem whose gamma is not constant, by evaluate() against the exact result.
TEST(NormLinearKernels, WrongSideFoldIsCaught) {
  std::mt19937_64 rng(test::test_seed());
  const std::vector<const Kernel*> controls = rows_of(Op::layernorm_linear_fwd, Origin::control);
  ASSERT_FALSE(controls.empty());
  int caught = 0, cases = 0;
  for (int iteration = 0; iteration < 40; ++iteration) {
    const int64_t d = 2 + static_cast<int64_t>(rng() % 200);
    const int64_t out = 1 + static_cast<int64_t>(rng() % 16);
    const Problem p = family_problem(Op::layernorm_linear_fwd, fold::Family::random, 2, d, out, rng);
    for (const Kernel* k : controls) {
      const Evaluation ev = evaluate(*k, p);
      ++cases;
      if (!ev.pass) ++caught;
      EXPECT_FALSE(ev.pass) << "control not caught: " << test::describe(ev) << " d=" << d << " out=" << out;
    }
  }
  EXPECT_EQ(caught, cases);
}

// The same control with a constant gamma is the correct fold (diag(c) W =
// W diag(c)): it must pass, so the check catches the side, not the act of folding.
TEST(NormLinearKernels, WrongSideWithConstantGammaIsTheFold) {
  std::mt19937_64 rng(test::test_seed());
  Problem p = family_problem(Op::layernorm_linear_fwd, fold::Family::random, 3, 40, 8, rng);
  std::fill(p.gamma.begin(), p.gamma.end(), 1.5f);
  for (const Kernel* k : rows_of(Op::layernorm_linear_fwd, Origin::control)) {
    const Evaluation ev = evaluate(*k, p);
    EXPECT_TRUE(ev.pass) << test::describe(ev);
  }
}

// ---- evaluate() on these ops ----

TEST(EvaluateNormLinear, DeclinesAProblemWithoutALinear) {
  std::mt19937_64 rng(test::test_seed());
  Problem p = family_problem(Op::rmsnorm_linear_fwd, fold::Family::random, 1, 8, 2, rng);
  p.weight.clear();
  p.bias.clear();
  p.out_features = 0;
  for (const Kernel* k : rows_of(Op::rmsnorm_linear_fwd, Origin::ours)) {
    const Evaluation ev = evaluate(*k, p);
    EXPECT_NE(ev.declined.find("no Linear"), std::string::npos) << ev.declined;
  }
}

TEST(EvaluateNormLinear, DeclinesNonFiniteParameters) {
  std::mt19937_64 rng(test::test_seed());
  Problem p = family_problem(Op::layernorm_linear_fwd, fold::Family::random, 1, 8, 2, rng);
  p.weight[3] = INFINITY;
  const Evaluation ev = evaluate(*rows_of(Op::layernorm_linear_fwd, Origin::ours).front(), p);
  EXPECT_NE(ev.declined.find("non-finite"), std::string::npos) << ev.declined;
}

TEST(EvaluateNormLinear, RejectsSizesThatDoNotFit) {
  std::mt19937_64 rng(test::test_seed());
  const Kernel& k = *rows_of(Op::layernorm_linear_fwd, Origin::ours).front();
  Problem p = family_problem(Op::layernorm_linear_fwd, fold::Family::random, 1, 8, 2, rng);
  Problem short_weight = p;
  short_weight.weight.pop_back();
  EXPECT_THROW(evaluate(k, short_weight), std::invalid_argument);
  Problem long_bias = p;
  long_bias.bias.push_back(1);
  EXPECT_THROW(evaluate(k, long_bias), std::invalid_argument);
  Problem rms = family_problem(Op::rmsnorm_linear_fwd, fold::Family::random, 1, 8, 2, rng);
  rms.beta.assign(8, 0.5f);
  EXPECT_THROW(evaluate(*rows_of(Op::rmsnorm_linear_fwd, Origin::ours).front(), rms), std::invalid_argument);
}

// A row with NaN or inf in x: every z of that row NaN (its xhat is), the other
// rows within the bound.
TEST(EvaluateNormLinear, NonFiniteRowGivesNaN) {
  std::mt19937_64 rng(test::test_seed());
  for (Op op : kOps)
    for (const Kernel* k : rows_of(op, Origin::ours)) {
      Problem p = family_problem(op, fold::Family::random, 3, 16, 4, rng);
      p.x[16 + 5] = NAN;
      p.x[32 + 2] = INFINITY;
      const Evaluation ev = evaluate(*k, p);
      EXPECT_TRUE(ev.pass) << test::describe(ev);
      EXPECT_FALSE(ev.nonfinite_mismatch);
    }
}

// No gamma, beta or bias: the plain normalization then W. (One row: with
// several, evaluate() tallies rows in parallel chunks and keeps only the
// worst element of each, not the per-output list.)
TEST(EvaluateNormLinear, WithoutAffineOrBias) {
  std::mt19937_64 rng(test::test_seed());
  for (Op op : kOps)
    for (const Kernel* k : rows_of(op, Origin::ours)) {
      Problem p = family_problem(op, fold::Family::random, 1, 33, 5, rng);
      p.gamma.clear();
      p.beta.clear();
      p.bias.clear();
      const Evaluation ev = evaluate(*k, p);
      EXPECT_TRUE(ev.pass) << test::describe(ev);
      ASSERT_EQ(ev.outputs.size(), 1u);
      EXPECT_EQ(ev.outputs[0].output, "z");
    }
}

// A kernel that never writes the last z is caught: the output array is
// checked whole (rows x out_features), not rows x cols.
TEST(EvaluateNormLinear, AnUnwrittenOutputIsReported) {
  std::mt19937_64 rng(test::test_seed());
  const Problem p = family_problem(Op::layernorm_linear_fwd, fold::Family::random, 2, 12, 3, rng);
  const Kernel& folded = *rows_of(Op::layernorm_linear_fwd, Origin::ours).back();
  Kernel skips_last = folded;
  skips_last.name = "test.skips_last_output";
  static LayerNormLinearFwdFn real = std::get<LayerNormLinearFwdFn>(folded.fn);
  skips_last.fn = LayerNormLinearFwdFn{[](const float* x, const float* g, const float* b, const float* w,
                                          const float* bias, float* z, int64_t rows, int64_t cols, int64_t out,
                                          float eps) {
    std::vector<float> full(static_cast<std::size_t>(rows * out));
    real(x, g, b, w, bias, full.data(), rows, cols, out, eps);
    std::copy(full.begin(), full.end() - 1, z);  // the last output is never written
  }};
  const Evaluation ev = evaluate(skips_last, p);
  EXPECT_TRUE(ev.unwritten_output);
  EXPECT_FALSE(ev.pass);
}

}  // namespace
}  // namespace normcheck
