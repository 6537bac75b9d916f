// Broken: divides the sum of squares by d - 1 (the unbiased estimator) where
// LayerNorm uses the biased variance (claim S3). The rstd is off by a factor
// sqrt((d-1)/d); d = 1 divides 0 by 0.
#include <cmath>

#include "broken_kernels.h"
#include "normcheck/bounds.h"
#include "scalar/forward_rows.h"

namespace normcheck::broken {
namespace {

void layernorm_unbiased(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                        float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    const float mu = scalar::row_mean(row, cols);
    const float variance = scalar::centred_squares(row, cols, mu) / static_cast<float>(cols - 1);
    const float rs = 1.0f / std::sqrt(variance + eps);
    scalar::write_normalized_row(row, gamma, beta, y + r * cols, cols, mu, rs);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

}  // namespace

Kernel unbiased_variance_kernel() {
  return {"broken.layernorm_fwd.unbiased_variance", Op::layernorm_fwd, Origin::control, DType::f32,
          "two-pass with the d-1 variance (wrong)", nc_layernorm_fwd_fn{layernorm_unbiased},
          default_bound(Op::layernorm_fwd)};
}

}  // namespace normcheck::broken
