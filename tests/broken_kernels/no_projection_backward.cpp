// Broken: dx = rstd (g - mean(g)) with g = gamma dy, missing the term
// - xhat mean(g xhat) that comes from the rstd's dependence on x. dgamma and
// dbeta are right.
#include <vector>

#include "broken_kernels.h"
#include "normcheck/bounds.h"

namespace normcheck::broken {
namespace {

void layernorm_bwd_no_projection(const float* dy, const float* x, const float* gamma, const float* mean,
                                 const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                                 int64_t cols) {
  std::vector<float> dgamma_sum(static_cast<size_t>(cols), 0.0f), dbeta_sum(static_cast<size_t>(cols), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* dy_row = dy + r * cols;
    const float* x_row = x + r * cols;
    float g_sum = 0;
    for (int64_t c = 0; c < cols; ++c) g_sum += (gamma ? gamma[c] : 1.0f) * dy_row[c];
    const float g_mean = g_sum / static_cast<float>(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const float g = (gamma ? gamma[c] : 1.0f) * dy_row[c];
      dx[r * cols + c] = rstd[r] * (g - g_mean);
      dgamma_sum[static_cast<size_t>(c)] += dy_row[c] * (x_row[c] - mean[r]) * rstd[r];
      dbeta_sum[static_cast<size_t>(c)] += dy_row[c];
    }
  }
  for (int64_t c = 0; c < cols; ++c) {
    if (dgamma) dgamma[c] = dgamma_sum[static_cast<size_t>(c)];
    if (dbeta) dbeta[c] = dbeta_sum[static_cast<size_t>(c)];
  }
}

}  // namespace

Kernel no_projection_backward_kernel() {
  return {"broken.layernorm_bwd.no_projection", Op::layernorm_bwd, Origin::control, DType::f32,
          "dx = rstd (g - mean g), no xhat term (wrong)", nc_layernorm_bwd_fn{layernorm_bwd_no_projection},
          default_bound(Op::layernorm_bwd)};
}

}  // namespace normcheck::broken
