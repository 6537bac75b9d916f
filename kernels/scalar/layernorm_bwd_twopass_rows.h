// The rows of the two-pass LayerNorm backward (layernorm_bwd.twopass) with the
// forward's saved mean and rstd: pass 1 forms xhat = (x - mean) * rstd, sums
// g = gamma*dy and the projection's terms, and adds the row's dgamma and dbeta
// terms; pass 2 writes dx = rstd * ((g - mean(g)) - xhat * mean(g xhat)).
// How mean(g xhat) is formed is the one thing its control twin
// (layernorm_bwd.naive_onepass) changes.
#pragma once

#include <cstdint>
#include <string_view>

#include "backward_rows.h"
#include "normcheck/bounds.h"

namespace normcheck::scalar {

enum class Projection {
  centred,   // mean(g xhat) = sum(g * xhat) / d
  raw_sums,  // rstd * (sum(g * x) / d - mean * mean(g)): cancels when |mean| >> sigma
};

template <Projection kProjection>
void layernorm_bwd_twopass_rows(const float* dy, const float* x, const float* gamma,
                                const float* mean, const float* rstd, float* dx, float* dgamma,
                                float* dbeta, int64_t rows, int64_t cols) {
  const float d = static_cast<float>(cols);
  const auto row_step = [&](const BackwardRow& row) {
    const float m = row.mean;
    const float a = row.rstd;
    float sum_g = 0.0f, sum_projection = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (row.x[j] - m) * a;
      const float g = gamma ? gamma[j] * row.dy[j] : row.dy[j];
      sum_g += g;
      sum_projection += g * (kProjection == Projection::centred ? xhat : row.x[j]);
      if (dgamma) dgamma[j] += row.dy[j] * xhat;
      if (dbeta) dbeta[j] += row.dy[j];
    }
    if (nan_dx_for_nonfinite_row(row.x, row.dy, row.dx, cols)) return;
    const float mean_g = sum_g / d;
    const float mean_g_xhat = kProjection == Projection::centred ? sum_projection / d
                                                                 : a * (sum_projection / d - m * mean_g);
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (row.x[j] - m) * a;
      const float g = gamma ? gamma[j] * row.dy[j] : row.dy[j];
      row.dx[j] = a * ((g - mean_g) - xhat * mean_g_xhat);
    }
  };
  for_each_backward_row(dy, x, mean, rstd, dx, dgamma, dbeta, rows, cols, row_step);
}

// The row of the two-pass rows with kProjection, held to the two-pass bound.
template <Projection kProjection>
constexpr Kernel twopass_backward_row(std::string_view name, Origin origin, std::string_view algorithm) {
  return backward_row(name, Op::layernorm_bwd, origin, &layernorm_bwd_twopass_rows<kProjection>,
                      &twopass_layernorm_bwd_bound, algorithm);
}

}  // namespace normcheck::scalar
