// Broken: the mean sums only the first 8 floor(d / 8) elements (a vector loop
// of width 8 whose remainder loop was forgotten) but divides by d. Right when
// d is a multiple of 8 or the tail sums to 0, wrong otherwise.
#include <cmath>

#include "broken_kernels.h"
#include "normcheck/bounds.h"
#include "scalar/forward_rows.h"

namespace normcheck::broken {
namespace {

void layernorm_mean_skips_tail(const float* x, const float* gamma, const float* beta, float* y,
                               float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float sum = 0;
    for (int64_t c = 0; c < cols - cols % 8; ++c) sum += row[c];
    const float mu = sum / static_cast<float>(cols);
    const float rs =
        1.0f / std::sqrt(scalar::centred_squares(row, cols, mu) / static_cast<float>(cols) + eps);
    scalar::write_normalized_row(row, gamma, beta, y + r * cols, cols, mu, rs);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

}  // namespace

Kernel mean_skips_tail_kernel() {
  return {"broken.layernorm_fwd.mean_skips_tail", Op::layernorm_fwd, Origin::control, DType::f32,
          "two-pass whose mean skips the d mod 8 tail (wrong)", nc_layernorm_fwd_fn{layernorm_mean_skips_tail},
          default_bound(Op::layernorm_fwd)};
}

}  // namespace normcheck::broken
