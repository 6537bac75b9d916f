// Broken: (x - mu) / (sigma + eps), seed 001's hand-written check (claim S2),
// where LayerNorm is (x - mu) / sqrt(sigma^2 + eps). Close when sigma >> eps,
// far off when sigma is comparable to sqrt(eps) or smaller.
#include <cmath>

#include "broken_kernels.h"
#include "normcheck/bounds.h"
#include "scalar/forward_rows.h"

namespace normcheck::broken {
namespace {

void layernorm_std_plus_eps(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                            float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    const float mu = scalar::row_mean(row, cols);
    const float sigma =
        std::sqrt(scalar::centred_squares(row, cols, mu) / static_cast<float>(cols));
    const float rs = 1.0f / (sigma + eps);
    scalar::write_normalized_row(row, gamma, beta, y + r * cols, cols, mu, rs);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

}  // namespace

Kernel std_plus_eps_kernel() {
  return {"broken.layernorm_fwd.std_plus_eps", Op::layernorm_fwd, Origin::control, DType::f32,
          "(x - mu) / (sigma + eps) (wrong)", nc_layernorm_fwd_fn{layernorm_std_plus_eps},
          default_bound(Op::layernorm_fwd)};
}

}  // namespace normcheck::broken
