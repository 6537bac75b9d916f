// Row steps of the scalar two-pass LayerNorm forward, shared by the kernels
// that use them: the y step by twopass, welford and the naive one-pass
// control (pytorch_form rounds x * rstd + (-mean * rstd) instead), and all
// three by the deliberately broken forwards of tests/broken_kernels, so that
// each of those differs from two-pass only in its mistake.
#pragma once

#include <cstdint>

namespace normcheck::scalar {

// fl(sum x / d), summed left to right.
inline float row_mean(const float* xr, int64_t cols) {
  float sum = 0.0f;
  for (int64_t i = 0; i < cols; ++i) sum += xr[i];
  return sum / static_cast<float>(cols);
}

// sum (x_i - mu)^2, left to right.
inline float centred_squares(const float* xr, int64_t cols, float mu) {
  float squares = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    const float centered = xr[i] - mu;
    squares += centered * centered;
  }
  return squares;
}

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
