// LayerNorm backward kernels of the table against the exact gradient, each held
// to its own a-priori bound by evaluate(). Kernels are taken from kernel_table();
// names appear only where a test states what a particular kernel must show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#include "kernel_test_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/reference.h"

namespace normcheck {
namespace {

// Our backward kernels (include_all: controls and third-party ones too). The
// accuracy tests hold only ours to their bounds: a third-party kernel breaking
// the default bound is a finding that `normcheck check` and the report show,
// not a defect of this repository.
std::vector<const Kernel*> backward_kernels(bool include_all) {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.op == Op::layernorm_bwd && k.dtype == DType::f32 &&
        (include_all || k.origin == Origin::ours))
      out.push_back(&k);
  return out;
}

TEST(LayerNormBwdKernels, TableHasTheScalarBackwardKernels) {
  EXPECT_NE(find_kernel("layernorm_bwd.twopass"), nullptr);
  EXPECT_NE(find_kernel("layernorm_bwd.pytorch_form"), nullptr);
  EXPECT_NE(find_kernel("layernorm_bwd.naive_onepass"), nullptr);
}

// eps > 0 makes a constant row's xhat exactly 0: dx = rstd (g - mean g), no NaN.
TEST(LayerNormBwdKernels, ConstantRowsWithEpsGiveNoNaN) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : backward_kernels(true))
    for (int64_t cols : {1, 2, 7, 768}) {
      Problem p = test::random_problem(rng, 3, cols, true, 0.0f, 1.0f, 1e-5f);
      for (int64_t r = 0; r < p.rows; ++r)
        for (int64_t j = 0; j < cols; ++j) p.x[r * cols + j] = 3.25f * static_cast<float>(r + 1);
      const Evaluation ev = evaluate(*k, p);
      EXPECT_FALSE(ev.nonfinite_mismatch) << k->name << " d=" << cols;
      EXPECT_TRUE(ev.pass) << k->name << " d=" << cols << " ratio " << ev.max_error_over_bound;
    }
}

// Shifted rows x = offset + N(0,1): kappa ~ offset. pytorch_form's dx error grows
// with kappa (the raw sums db*mean - ds cancel) and stays within its own bound;
// the two-pass backward stays within its bound; the one-pass control breaks the
// two-pass bound it is held to. dy = 1 + 0.1 N(0,1): a gradient with a mean, so
// the raw sums grow steadily and their roundings add up (with dy = N(0,1) the
// partial sums random-walk, the one-pass error stays near u kappa, i.e. within
// what the two-pass bound already allows for the saved mean's rounding).
TEST(LayerNormBwdKernels, ShiftedRowsPytorchFormErrorGrowsWithinItsBound) {
  const uint64_t seed = test::test_seed();
  const Kernel* pytorch_form = find_kernel("layernorm_bwd.pytorch_form");
  const Kernel* twopass = find_kernel("layernorm_bwd.twopass");
  const Kernel* control = find_kernel("layernorm_bwd.naive_onepass");
  ASSERT_TRUE(pytorch_form && twopass && control);
  std::vector<double> pytorch_normwise;
  for (float offset : {0.0f, 1e2f, 1e4f}) {
    std::mt19937_64 rng(seed);  // the same N(0,1) draws at every offset
    const Problem p = test::random_problem(rng, 4, 768, true, offset, 1.0f, 1e-5f, 1.0f, 0.1f);
    const Evaluation ev_pf = evaluate(*pytorch_form, p);
    const Evaluation ev_tp = evaluate(*twopass, p);
    const Evaluation ev_ctl = evaluate(*control, p);
    std::cout << "offset " << offset << ": pytorch_form normwise " << ev_pf.normwise
              << " max_ulp " << ev_pf.max_ulp << " error/bound " << ev_pf.max_error_over_bound
              << "; twopass normwise " << ev_tp.normwise << " error/bound "
              << ev_tp.max_error_over_bound << "; naive_onepass error/twopass-bound "
              << ev_ctl.max_error_over_bound << "\n";
    EXPECT_TRUE(ev_pf.pass) << "offset " << offset << " ratio " << ev_pf.max_error_over_bound;
    EXPECT_TRUE(ev_tp.pass) << "offset " << offset << " ratio " << ev_tp.max_error_over_bound;
    if (offset == 1e4f) {
      EXPECT_FALSE(ev_ctl.pass) << "the one-pass control went unnoticed";
    }
    pytorch_normwise.push_back(ev_pf.normwise);
  }
  // The cancellation's error is ~u kappa sqrt(d) M_g: normwise ~1e-6 at kappa ~ 1,
  // ~1e-2 at kappa ~ 1e4 (docs/accuracy_backward.md). A factor 100 between offset 0
  // and 1e4 is far below the 1e4 that kappa grows by, far above run-to-run noise.
  EXPECT_GT(pytorch_normwise[2], 100 * pytorch_normwise[0]);
  EXPECT_GT(pytorch_normwise[2], pytorch_normwise[1]);
}

// Deliberately broken backward kernels: evaluate must catch each under the
// two-pass bound. (1) drops the mean(g) term; (2) divides the projection by d - 1.
void broken_bwd(const float* dy, const float* x, const float* gamma, const float* mean,
                const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                int64_t cols, bool drop_mean_g) {
  for (int64_t j = 0; j < cols; ++j) {
    if (dgamma) dgamma[j] = 0.0f;
    if (dbeta) dbeta[j] = 0.0f;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float a = rstd[r];
    double sum_g = 0, sum_gh = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const float h = (x[r * cols + j] - mean[r]) * a;
      const float g = (gamma ? gamma[j] : 1.0f) * dy[r * cols + j];
      sum_g += g;
      sum_gh += g * h;
      if (dgamma) dgamma[j] += dy[r * cols + j] * h;
      if (dbeta) dbeta[j] += dy[r * cols + j];
    }
    const double n_proj = drop_mean_g ? static_cast<double>(cols) : static_cast<double>(cols - 1);
    const double mean_g = drop_mean_g ? 0.0 : sum_g / static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) {
      const float h = (x[r * cols + j] - mean[r]) * a;
      const float g = (gamma ? gamma[j] : 1.0f) * dy[r * cols + j];
      dx[r * cols + j] = static_cast<float>(a * (g - mean_g - h * (sum_gh / n_proj)));
    }
  }
}
void bwd_without_mean_g(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                        int64_t cols) {
  broken_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols, true);
}
void bwd_with_d_minus_1(const float* dy, const float* x, const float* gamma, const float* mean,
                        const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                        int64_t cols) {
  broken_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols, false);
}

TEST(LayerNormBwdKernels, BrokenBackwardIsCaught) {
  std::mt19937_64 rng(test::test_seed());
  const Problem p = test::random_problem(rng, 2, 64, true, 0.0f, 1.0f, 1e-5f);
  for (auto fn : {&bwd_without_mean_g, &bwd_with_d_minus_1}) {
    const Kernel broken{.name = "test.broken_bwd",
                        .op = Op::layernorm_bwd,
                        .origin = Origin::control,
                        .dtype = DType::f32,
                        .algorithm = "deliberately wrong",
                        .fn = fn,
                        .bound = &twopass_layernorm_bwd_bound};
    const Evaluation ev = evaluate(broken, p);
    EXPECT_FALSE(ev.pass);
    EXPECT_GT(ev.max_error_over_bound, 1.0);
    EXPECT_EQ(ev.worst.output, "dx");
  }
}

// For gamma == 1 and eps == 0 the exact gradient satisfies sum_i dx_i = 0 and
// sum_i dx_i xhat_i = 0 (sum xhat = 0, sum xhat^2 = d). So for a computed dx^,
// |sum dx^_i w_i| <= sum_i |dx^_i - dx_i| |w_i| <= sum_i allowance_i |w_i| (w = 1
// or xhat), the allowance being the kernel's bound as evaluate() applies it
// (EvaluateOptions::keep_main_elements), plus the rounding of this double-precision check:
// d 2^-52 sum |dx^_i w_i|.
TEST(LayerNormBwdKernels, GradientIsOrthogonalToOnesAndXhat) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : backward_kernels(false)) {
    for (int64_t cols : {3, 7, 768}) {
      const int64_t rows = 2;
      const Problem p = test::random_problem(rng, rows, cols, false, 0.0f, 1.0f, 0.0f);
      EvaluateOptions keep;
      keep.keep_main_elements = true;
      const Evaluation judged = evaluate(*k, p, keep);
      ASSERT_EQ(judged.main_elements.size(), static_cast<size_t>(rows * cols)) << k->name << judged.declined;
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0, sum_xhat = 0, tol = 0, tol_xhat = 0, mag = 0, mag_xhat = 0;
        for (int64_t j = 0; j < cols; ++j) {
          const size_t i = static_cast<size_t>(r * cols + j);
          const MainElement& e = judged.main_elements[i];
          const double xhat = e.xhat;
          const double v = e.computed;
          sum += v;
          sum_xhat += v * xhat;
          mag += std::fabs(v);
          mag_xhat += std::fabs(v * xhat);
          tol += e.allowed;
          tol_xhat += e.allowed * std::fabs(xhat);
        }
        const double check_rounding = static_cast<double>(cols) * 0x1p-52;
        EXPECT_LE(std::fabs(sum), tol + check_rounding * mag) << k->name << " d=" << cols;
        EXPECT_LE(std::fabs(sum_xhat), tol_xhat + check_rounding * mag_xhat)
            << k->name << " d=" << cols;
      }
    }
  }
}

}  // namespace
}  // namespace normcheck
