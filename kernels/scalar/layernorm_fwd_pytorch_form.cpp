// LayerNorm forward in seed 004's form: y = (x * scale + bias) * gamma + beta
// with scale = rstd and bias = -mean * rstd, as PyTorch's CPU kernel
// (aten/src/ATen/native/cpu/layer_norm_kernel.cpp, LayerNormKernelImplInternal).
// Its mean and variance come, as in PyTorch, from Welford updates merged with
// Chan's formula in a cascade (at::native::RowwiseMoments,
// aten/src/ATen/native/cpu/moments_utils.h); we reuse welford_cascade.h, whose
// scalar order differs from PyTorch's vector lanes but is the same algorithm.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "bound_blocks.h"
#include "normcheck/kernel.h"
#include "welford_cascade.h"

namespace normcheck {

// Error bound (docs/accuracy.md, "PyTorch form"): the Welford moments'
// error (welford_moments_error), r^ = fl(1 / fl(sqrt(max(var^, 0) + eps))) (the
// clamp only moves var^ towards the exact, non-negative value), then
//   xhat^ = fl(fl(x r^) + fl(-mu^ r^))
// where each product's rounding is relative to |x| r or |mu^| r, not to |xhat|:
// with |x_i| r <= |xhat_i| + kappa the cancellation adds u (1 + rho)(|xhat_i| + 2 kappa + Delta)
// to xhat's error (scale_bias_bound). On a row x = 1e4 + N(0, 1) (kappa ~ 1e4)
// that is ~ 2e4 u = 1.2e-3 absolute in xhat where the subtraction x - mu^ of
// the Welford kernel loses nothing: seed 004's rewrite is algebraically equal,
// numerically not (claim S4).
Bound pytorch_form_layernorm_fwd_bound(const RowCondition& c) {
  const MomentsError m = welford_moments_error(c);
  return scale_bias_bound(m, rstd_error(m.var_eps, 2, c), c);
}

namespace {

void pytorch_form_fwd(const float* x, const float* gamma, const float* beta, float* y,
                      float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const scalar::FloatMoments m = scalar::welford_moments(xr, cols);
    const float variance = std::max(m.m2 / m.n, 0.0f);
    const float scale = 1.0f / std::sqrt(variance + eps);
    const float bias = -m.mean * scale;
    for (int64_t i = 0; i < cols; ++i) {
      const float normalized = xr[i] * scale + bias;
      const float scaled = gamma ? normalized * gamma[i] : normalized;
      yr[i] = beta ? scaled + beta[i] : scaled;
    }
    if (mean) mean[row] = m.mean;
    if (rstd) rstd[row] = scale;
  }
}

}  // namespace

extern const Kernel kLayerNormFwdPytorchForm;
constinit const Kernel kLayerNormFwdPytorchForm = {
    .name = "layernorm_fwd.pytorch_form",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Welford/Chan moments (PyTorch RowwiseMoments); "
                 "(x * rstd + (-mean * rstd)) * gamma + beta (seed 004)",
    .fn = &pytorch_form_fwd,
    .bound = &pytorch_form_layernorm_fwd_bound,
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
};

}  // namespace normcheck
