// The third-party adapters' WIRING: on well-conditioned rows (where every
// sound algorithm meets the default bound) each adapter agrees with the exact
// reference within default_bound(op), with and without gamma/beta, on several
// rows x cols layouts and on misaligned arrays. A miswired adapter (gamma and
// beta swapped, rows and cols transposed, mean and rstd swapped, dgamma and
// dbeta swapped) fails the same check: the negative controls below. How the
// libraries fare on hard rows is a finding for the report, not tested here.
// Adapters are taken from kernel_table() (origin third_party), the float32
// rows of the table's own interface; libtorch's bf16 backward, a version-2
// row, has its tests in test_torch_bf16_backward.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_seed.h"
#include "describe_evaluation.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/invoke.h"

namespace normcheck {
namespace {

std::vector<const Kernel*> adapters() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::third_party && k.dtype == DType::f32) out.push_back(&k);
  return out;
}

// Well conditioned: row r is shifted by r / (2 rows) (so rows differ and a
// transposed layout shows), |mean|/sigma below about 1 (libtorch's float
// Welford variance already exceeds the default bound at |mean|/sigma ~ 20 on
// 7-element rows: a finding, not a wiring fault), values N(0,1) around it; gamma in
// [0.5, 1.5] and beta in [-1, 1], distinct per column (so swapping them shows);
// dy N(0,1). eps = 1e-5 is far below sigma^2 = 1.
Problem problem(std::mt19937_64& rng, Op op, int64_t rows, int64_t cols, bool gamma, bool beta,
                int misalign) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.eps = 1e-5f;
  p.misalign_floats = misalign;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) p.x.push_back(0.5f * static_cast<float>(r) / static_cast<float>(rows) + normal(rng));
  if (gamma)
    for (int64_t c = 0; c < cols; ++c) p.gamma.push_back(1.0f + 0.5f * uniform(rng));
  if (beta)
    for (int64_t c = 0; c < cols; ++c) p.beta.push_back(uniform(rng));
  if (op == Op::layernorm_bwd)
    for (int64_t i = 0; i < rows * cols; ++i) p.dy.push_back(normal(rng));
  return p;
}

struct Layout {
  int64_t rows, cols;
};
// One row; a few odd-length rows; more rows than columns; a transformer width.
const Layout kLayouts[] = {{1, 5}, {3, 17}, {33, 7}, {4, 768}};

class AdapterTest : public testing::TestWithParam<const Kernel*> {};

TEST_P(AdapterTest, PromisesTheDefaultBound) {
  const Kernel& k = *GetParam();
  const Bound expected = default_bound(k.op)({.d = 768, .rows = 64, .kappa = 3, .max_kappa = 5,
                                              .eps_share = 1e-5});
  const Bound actual = k.bound({.d = 768, .rows = 64, .kappa = 3, .max_kappa = 5, .eps_share = 1e-5});
  // Bound is eleven doubles and nothing else.
  EXPECT_EQ(std::memcmp(&actual, &expected, sizeof(Bound)), 0) << k.name;
}

TEST_P(AdapterTest, AgreesWithTheExactReferenceOnWellConditionedRows) {
  const Kernel& k = *GetParam();
  std::mt19937_64 rng(test::test_seed());
  for (const Layout& layout : kLayouts)
    for (int affine = 0; affine < 4; ++affine)
      for (int misalign : {0, 1}) {
        const bool gamma = affine & 1, beta = affine & 2;
        if (k.op == Op::layernorm_bwd && beta) continue;  // the backward has no beta
        const Problem p = problem(rng, k.op, layout.rows, layout.cols, gamma, beta, misalign);
        const Evaluation ev = evaluate(k, p);
        const std::string what = std::to_string(layout.rows) + "x" + std::to_string(layout.cols) +
                                 (gamma ? " gamma" : "") + (beta ? " beta" : "") +
                                 (misalign ? " misaligned" : "");
        EXPECT_TRUE(ev.declined.empty()) << k.name << " declined " << what << ": " << ev.declined;
        EXPECT_TRUE(ev.pass) << k.name << " on " << what << ": " << test::describe(ev);
      }
}

TEST_P(AdapterTest, ZeroRowsOrColumnsIsANoOp) {
  const Kernel& k = *GetParam();
  constexpr float kSentinel = 12345.0f;
  std::vector<float> in(16, 1.0f), out(16, kSentinel), out2(16, kSentinel), out3(16, kSentinel);
  for (const Layout shape : {Layout{0, 4}, Layout{4, 0}, Layout{0, 0}}) {
    EXPECT_EQ(declines(k, {Shape{shape.rows, shape.cols, true, true}}), "");
    const bool fwd = k.op == Op::layernorm_fwd;
    invoke(k, {.rows = shape.rows, .cols = shape.cols, .eps = 1e-5f, .x = in.data(), .dy = in.data(),
               .gamma = in.data(), .beta = in.data(), .saved_mean = in.data(), .saved_stat = in.data(),
               .out = out.data(), .mean = fwd ? out2.data() : nullptr, .stat = fwd ? out3.data() : nullptr,
               .dgamma = fwd ? nullptr : out2.data(), .dbeta = fwd ? nullptr : out3.data()});
    for (const auto* buffer : {&out, &out2, &out3})
      for (float v : *buffer) EXPECT_EQ(v, kSentinel) << k.name << " wrote on an empty problem";
  }
}

// A shape whose size in bytes does not fit int64 must be declined with a
// reason (oneDNN itself accepts such a descriptor), not run.
TEST_P(AdapterTest, DeclinesWithAReasonWhatItsLibraryCannotDo) {
  const Kernel& k = *GetParam();
  EXPECT_EQ(declines(k, {Shape{64, 768, true, true}}), "") << k.name << " declines a typical shape";
  const int64_t huge = int64_t{1} << 40;  // huge * huge overflows int64
  const std::string reason = declines(k, {Shape{huge, huge, true, true}});
  EXPECT_FALSE(reason.empty()) << k.name << " accepts a 2^80-element problem";
  std::cout << k.name << " declines 2^40 x 2^40: " << reason << "\n";
}

// ---- negative controls: miswired copies of each adapter must fail ----

const Kernel* g_wrapped = nullptr;  // the adapter the miswired functions call

void fwd_gamma_beta_swapped(const float* x, const float* gamma, const float* beta, float* y,
                            float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  invoke(*g_wrapped, {.rows = rows, .cols = cols, .eps = eps, .x = x, .gamma = beta, .beta = gamma, .out = y,
                      .mean = mean, .stat = rstd});
}
void fwd_transposed(const float* x, const float* gamma, const float* beta, float* y,
                    float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  // Same element count, rows and cols exchanged: what a layout mix-up does.
  // The control's problem has rows <= cols, so gamma/beta (cols long) cover
  // the transposed row length; the statistics, cols long now, are cut to rows.
  std::vector<float> m(static_cast<std::size_t>(cols)), r(static_cast<std::size_t>(cols));
  invoke(*g_wrapped, {.rows = cols, .cols = rows, .eps = eps, .x = x, .gamma = gamma, .beta = beta, .out = y,
                      .mean = m.data(), .stat = r.data()});
  for (int64_t i = 0; i < rows; ++i) {
    if (mean) mean[i] = m[static_cast<std::size_t>(i)];
    if (rstd) rstd[i] = r[static_cast<std::size_t>(i)];
  }
}
void bwd_stats_swapped(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                       int64_t cols) {
  invoke(*g_wrapped, {.rows = rows, .cols = cols, .x = x, .dy = dy, .gamma = gamma, .saved_mean = rstd,
                      .saved_stat = mean, .out = dx, .dgamma = dgamma, .dbeta = dbeta});
}
void bwd_param_grads_swapped(const float* dy, const float* x, const float* gamma,
                             const float* mean, const float* rstd, float* dx, float* dgamma,
                             float* dbeta, int64_t rows, int64_t cols) {
  invoke(*g_wrapped, {.rows = rows, .cols = cols, .x = x, .dy = dy, .gamma = gamma, .saved_mean = mean,
                      .saved_stat = rstd, .out = dx, .dgamma = dbeta, .dbeta = dgamma});
}

TEST_P(AdapterTest, MiswiredCopiesFailTheSameCheck) {
  const Kernel& k = *GetParam();
  g_wrapped = &k;
  std::mt19937_64 rng(test::test_seed());
  const Problem p = problem(rng, k.op, 6, 40, true, k.op == Op::layernorm_fwd, 0);
  std::vector<std::pair<const char*, KernelFn>> miswired;
  if (k.op == Op::layernorm_fwd) {
    miswired = {{"gamma/beta swapped", &fwd_gamma_beta_swapped}, {"transposed", &fwd_transposed}};
  } else {
    miswired = {{"mean/rstd swapped", &bwd_stats_swapped},
                {"dgamma/dbeta swapped", &bwd_param_grads_swapped}};
  }
  ASSERT_TRUE(evaluate(k, p).pass) << k.name << " itself must pass for the control to mean anything";
  for (const auto& [label, fn] : miswired) {
    Kernel bad = k;
    bad.fn = fn;
    EXPECT_FALSE(evaluate(bad, p).pass) << k.name << " " << label << " was not caught";
  }
}

INSTANTIATE_TEST_SUITE_P(ThirdParty, AdapterTest, testing::ValuesIn(adapters()),
                         [](const testing::TestParamInfo<const Kernel*>& info) {
                           std::string name(info.param->name);
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AdapterTest);

// The build options decide which adapters exist; the table must list them.
TEST(Adapters, TheTableListsTheAdaptersThisBuildHas) {
#if NORMCHECK_WITH_ONEDNN
  EXPECT_NE(find_kernel("layernorm_fwd.onednn"), nullptr);
  EXPECT_NE(find_kernel("layernorm_bwd.onednn"), nullptr);
#endif
#if NORMCHECK_WITH_TORCH
  EXPECT_NE(find_kernel("layernorm_fwd.torch"), nullptr);
  EXPECT_NE(find_kernel("layernorm_bwd.torch"), nullptr);
  EXPECT_NE(find_kernel("layernorm_bwd.torch_bf16"), nullptr);
#endif
  for (const Kernel* k : adapters()) EXPECT_NE(k->algorithm, "") << k->name;
}

}  // namespace
}  // namespace normcheck
