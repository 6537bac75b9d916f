// Every LayerNorm forward kernel of the table (controls aside) within its own
// a-priori bound, as evaluate() measures it against the exact reference.
// Tolerances are the kernels' bounds; nothing here is widened by hand.
// Random rows of every family, every kernel of the table: the property
// suite's within_bound (properties/within_bound_property.cpp).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_rows.h"
#include "normcheck/evaluate.h"
#include "normcheck/invoke.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck {
namespace {

using test::expect_pass;
using test::forward_kernels;

TEST(LayerNormFwdKernels, TableHasTheScalarForwardKernels) {
  for (const char* name : {"layernorm_fwd.twopass", "layernorm_fwd.welford",
                           "layernorm_fwd.pytorch_form", "layernorm_fwd.naive_onepass"})
    EXPECT_NE(find_kernel(name), nullptr) << name;
  EXPECT_EQ(find_kernel("layernorm_fwd.naive_onepass")->origin, Origin::control);
}

// Pairs m +- a about a power-of-two mean m, with a in {1 (5 times), 3 (3 times)}:
// the mean is m exactly, sigma^2 = (5 + 27) / 8 = 4 exactly, so with eps = 0
// every xhat is +-1/2 or +-3/2 and y = gamma xhat + beta is a float too.
Problem representable_rows(float m, int64_t cols, bool with_gamma, bool with_beta) {
  const float offsets[8] = {1, 1, 1, 1, 1, 3, 3, 3};
  Problem p;
  p.rows = 1;
  p.cols = cols;
  p.eps = 0;
  for (int64_t i = 0; i < cols / 2; ++i) {
    p.x.push_back(m + offsets[i % 8]);
    p.x.push_back(m - offsets[i % 8]);
  }
  for (int64_t j = 0; j < cols; ++j) {
    if (with_gamma) p.gamma.push_back(j % 2 ? 2.0f : -0.75f);
    if (with_beta) p.beta.push_back(j % 3 ? 0.25f : -4.0f);
  }
  return p;
}

TEST(LayerNormFwdKernels, RepresentableOutputsWithinBound) {
  for (const Kernel* k : forward_kernels())
    for (float m : {0x1p-7f, 1.0f, 0x1p10f, 0x1p20f})
      for (int64_t cols : {16, 768})
        for (int affine = 0; affine < 4; ++affine)
          expect_pass(*k, representable_rows(m, cols, affine & 1, affine & 2),
                      "m = " + std::to_string(m) + ", d = " + std::to_string(cols) +
                          ", affine " + std::to_string(affine));
}

// Rows far from 1 in scale, eps = 0 (so r ~ 1/scale): tiny rows reach gradual
// underflow (the bounds' 2^-150 terms), large ones stay inside InputRange.
TEST(LayerNormFwdKernels, ScaledRowsWithinBound) {
  std::mt19937_64 rng(test::fixed_seed(5));
  for (float scale : {1e-38f, 1e-30f, 1e-20f, 1e15f})
    for (float eps : {0.0f, 1e-5f}) {
      Problem p = test::shifted_normal_rows(rng, 3, 33, 0.0f, 1.0f, eps);
      for (std::size_t i = 0; i < p.x.size(); ++i) p.x[i] = (p.x[i] + (i % 3 == 0 ? 4.0f : 0.0f)) * scale;
      for (const Kernel* k : forward_kernels())
        expect_pass(*k, p, "scale " + std::to_string(scale) + ", eps " + std::to_string(eps));
    }
}

// eps > 0 with zero variance: xhat = 0 exactly, y = beta; no kernel may give NaN.
TEST(LayerNormFwdKernels, ConstantRowsGiveNoNaN) {
  for (int64_t cols : {1, 3, 768}) {
    Problem p;
    p.rows = 5;
    p.cols = cols;
    p.eps = 1e-5f;
    for (float v : {0.0f, 0.1f, -7.3f, 1e4f, 3e-20f})
      for (int64_t j = 0; j < cols; ++j) p.x.push_back(v);
    for (int64_t j = 0; j < cols; ++j) p.beta.push_back(0.5f);
    for (const Kernel* k : forward_kernels()) {
      const Evaluation ev = evaluate(*k, p);
      if (!ev.declined.empty()) continue;
      EXPECT_TRUE(ev.pass) << "d = " << cols << ": " << test::describe(ev);
      EXPECT_FALSE(ev.nonfinite_mismatch) << k->name << " gave NaN/inf on a constant row";
    }
  }
}

// A NaN or an infinity anywhere in a row makes all of that row's y NaN; the
// other rows are unaffected (evaluate() holds both to the reference).
TEST(LayerNormFwdKernels, NonFiniteRowsGiveNaNRows) {
  std::mt19937_64 rng(test::fixed_seed(7));
  Problem p = test::shifted_normal_rows(rng, 4, 7, 0.0f, 1.0f, 1e-5f);
  p.x[1 * 7 + 3] = NAN;
  p.x[2 * 7 + 0] = INFINITY;
  p.x[3 * 7 + 6] = -INFINITY;
  for (const Kernel* k : forward_kernels())
    if (k->range.handles_nonfinite) expect_pass(*k, p, "rows with NaN, +inf, -inf");
}

// mean and rstd may be NULL: y is then bit for bit what it is with them.
TEST(LayerNormFwdKernels, NullStatisticsLeaveYUnchanged) {
  std::mt19937_64 rng(test::fixed_seed(11));
  const Problem p = test::shifted_normal_rows(rng, 3, 37, 2.0f, 1.0f, 1e-5f);
  for (const Kernel* k : forward_kernels()) {
    if (k->dtype != DType::f32 || !declines(*k, request_for(*k, p)).empty()) continue;
    std::vector<float> with(p.x.size()), without(p.x.size()), mean(3), rstd(3);
    // a kernel whose spec adds a residual reads one and writes the sum
    std::vector<float> zeros(p.x.size()), sum(p.x.size());
    KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps, .x = p.x.data()};
    if (spec_of(*k).add) args.residual = zeros.data(), args.residual_out = sum.data();
    KernelArgs with_statistics = args;
    with_statistics.out = with.data(), with_statistics.mean = mean.data(), with_statistics.stat = rstd.data();
    KernelArgs without_statistics = args;
    without_statistics.out = without.data();
    invoke(*k, with_statistics);
    invoke(*k, without_statistics);
    for (std::size_t i = 0; i < with.size(); ++i)
      EXPECT_EQ(std::bit_cast<uint32_t>(with[i]), std::bit_cast<uint32_t>(without[i]))
          << k->name << " y[" << i << "]";
  }
}

}  // namespace
}  // namespace normcheck
