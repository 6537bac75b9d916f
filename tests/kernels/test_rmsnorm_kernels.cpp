// RMSNorm forward and backward kernels of the table against the exact results,
// each held to its own bound by evaluate(). Kernels come from kernel_table().
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

std::vector<const Kernel*> kernels_of(Op op) {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.op == op && k.dtype == DType::f32 && k.origin != Origin::control) out.push_back(&k);
  return out;
}

TEST(RmsNormKernels, TableHasTheScalarKernels) {
  EXPECT_NE(find_kernel("rmsnorm_fwd.scalar"), nullptr);
  EXPECT_NE(find_kernel("rmsnorm_bwd.scalar"), nullptr);
}

TEST(RmsNormKernels, RandomRowsWithinBound) {
  std::mt19937_64 rng(test::test_seed());
  for (Op op : {Op::rmsnorm_fwd, Op::rmsnorm_bwd})
    for (const Kernel* k : kernels_of(op)) test::expect_random_rows_within_bound(*k, rng);
}

// Zero rows with eps > 0: rrms = 1/sqrt(eps), y = 0, dx = rrms g: no NaN.
TEST(RmsNormKernels, ZeroRowsWithEpsGiveNoNaN) {
  std::mt19937_64 rng(test::test_seed());
  for (Op op : {Op::rmsnorm_fwd, Op::rmsnorm_bwd})
    for (const Kernel* k : kernels_of(op))
      for (int64_t cols : {1, 7, 768}) {
        Problem p = test::random_problem(rng, 2, cols, true, 0.0f, 1.0f, 1e-5f);
        std::fill(p.x.begin(), p.x.end(), 0.0f);
        const Evaluation ev = evaluate(*k, p);
        EXPECT_FALSE(ev.nonfinite_mismatch) << k->name << " d=" << cols;
        EXPECT_TRUE(ev.pass) << k->name << " d=" << cols << " ratio " << ev.max_error_over_bound;
      }
}

// Rows whose squares overflow (|x| ~ 1e30, sum of squares ~ 1e63) or underflow
// (|x| ~ 1e-30): the exact result is ordinary, and every kernel must either get
// it within its bound or declare the range it handles (then the row is skipped).
// The backward stops at 1e-30: below ~1e-39 rrms itself exceeds FLT_MAX, the
// saved statistic is +inf and dx is not a float computation any kernel can do.
TEST(RmsNormKernels, ExtremeScalesWithinBoundOrOutsideDeclaredRange) {
  std::mt19937_64 rng(test::test_seed());
  for (Op op : {Op::rmsnorm_fwd, Op::rmsnorm_bwd})
    for (const Kernel* k : kernels_of(op))
      for (float scale : op == Op::rmsnorm_fwd ? std::vector<float>{1e30f, 1e-30f, 1e37f, 1e-40f}
                                               : std::vector<float>{1e30f, 1e-30f, 1e36f})
        for (int64_t cols : {2, 768}) {
          const Problem p = test::random_problem(rng, 2, cols, true, 0.0f, scale, 0.0f);
          if (!declines(*k, request_for(*k, p)).empty()) continue;
          test::expect_within_bound(
              *k, p, "scale " + std::to_string(scale) + " d=" + std::to_string(cols));
        }
}

// rmsnorm_fwd.scalar promises the whole float range (no InputRange).
TEST(RmsNormKernels, ScalarForwardHandlesTheFullRange) {
  const Kernel* k = find_kernel("rmsnorm_fwd.scalar");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->range.max_abs_x, FLT_MAX);
  EXPECT_FALSE(k->range.sqrt_d_scaled);
  Problem p;
  p.rows = 1;
  p.cols = 4;
  p.eps = 1e-5f;
  p.x = {FLT_MAX, -FLT_MAX, 0x1p-149f, 1.0f};
  test::expect_within_bound(*k, p, "row with +-FLT_MAX");
}

// Deliberately broken RMSNorm kernels, each caught by evaluate under the
// scalar kernels' bounds: a backward without the projection term, a backward
// that averages over d - 1, and a forward that forgets eps.
void bwd_no_projection(const float* dy, const float* x, const float* gamma, const float* rrms,
                       float* dx, float* dgamma, int64_t rows, int64_t cols) {
  for (int64_t j = 0; dgamma && j < cols; ++j) dgamma[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      const float g = (gamma ? gamma[j] : 1.0f) * dy[r * cols + j];
      dx[r * cols + j] = rrms[r] * g;
      if (dgamma) dgamma[j] += dy[r * cols + j] * x[r * cols + j] * rrms[r];
    }
}
void bwd_d_minus_1(const float* dy, const float* x, const float* gamma, const float* rrms,
                   float* dx, float* dgamma, int64_t rows, int64_t cols) {
  for (int64_t j = 0; dgamma && j < cols; ++j) dgamma[j] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j)
      sum += (gamma ? gamma[j] : 1.0f) * dy[r * cols + j] * x[r * cols + j] * rrms[r];
    const double proj = sum / static_cast<double>(cols - 1);
    for (int64_t j = 0; j < cols; ++j) {
      const double g = (gamma ? gamma[j] : 1.0f) * dy[r * cols + j];
      dx[r * cols + j] = static_cast<float>(rrms[r] * (g - x[r * cols + j] * rrms[r] * proj));
      if (dgamma) dgamma[j] += dy[r * cols + j] * x[r * cols + j] * rrms[r];
    }
  }
}
void fwd_without_eps(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                     int64_t cols, float) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += double{x[r * cols + j]} * x[r * cols + j];
    const double rr = 1.0 / std::sqrt(sum / static_cast<double>(cols));
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = static_cast<float>((gamma ? gamma[j] : 1.0f) * x[r * cols + j] * rr);
    if (rrms) rrms[r] = static_cast<float>(rr);
  }
}

TEST(RmsNormKernels, BrokenKernelsAreCaught) {
  std::mt19937_64 rng(test::test_seed());
  const Problem p = test::random_problem(rng, 2, 64, true, 0.0f, 1.0f, 1e-5f);
  for (auto fn : {&bwd_no_projection, &bwd_d_minus_1}) {
    const Kernel broken{.name = "test.broken_rms_bwd",
                        .op = Op::rmsnorm_bwd,
                        .origin = Origin::control,
                        .dtype = DType::f32,
                        .algorithm = "deliberately wrong",
                        .fn = fn,
                        .bound = &rmsnorm_bwd_bound};
    const Evaluation ev = evaluate(broken, p);
    EXPECT_FALSE(ev.pass);
    EXPECT_EQ(ev.worst.output, "dx");
  }
  // Forgetting eps matters once eps is not negligible: x ~ 1e-3 with eps = 1e-5
  // gives mean(x^2) ~ 1e-6, so rrms is off by ~ a factor sqrt(11).
  Problem small = test::random_problem(rng, 2, 64, true, 0.0f, 1e-3f, 1e-5f);
  const Kernel broken_fwd{.name = "test.rms_fwd_without_eps",
                          .op = Op::rmsnorm_fwd,
                          .origin = Origin::control,
                          .dtype = DType::f32,
                          .algorithm = "deliberately wrong",
                          .fn = &fwd_without_eps,
                          .bound = &rmsnorm_fwd_bound};
  const Evaluation ev = evaluate(broken_fwd, small);
  EXPECT_FALSE(ev.pass);
  EXPECT_GT(ev.max_error_over_bound, 1.0);
}

}  // namespace
}  // namespace normcheck
