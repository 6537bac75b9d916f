// The output step shared by the scalar LayerNorm forward kernels that
// normalize as (x - mean) * rstd: twopass, welford and the naive one-pass
// control (pytorch_form rounds x * rstd + (-mean * rstd) instead).
#pragma once

#include <cstdint>

namespace normcheck::scalar {

// y_i = fl(fl(gamma_i fl(fl(x_i - mu) r)) + beta_i), the roundings the
// subtract_then_scale_bound of these kernels counts; gamma/beta may be null.
inline void write_normalized_row(const float* xr, const float* gamma, const float* beta, float* yr,
                                 int64_t cols, float mu, float r) {
  for (int64_t i = 0; i < cols; ++i) {
    const float xhat = (xr[i] - mu) * r;
    const float scaled = gamma ? gamma[i] * xhat : xhat;
    yr[i] = beta ? scaled + beta[i] : scaled;
  }
}

}  // namespace normcheck::scalar
