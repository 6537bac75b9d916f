// The parts the broken LayerNorm forwards share with a correct two-pass
// kernel, so each broken file shows only its mistake.
#pragma once

#include <cstdint>

namespace normcheck::broken {

// Writes y = gamma (x - mean) rstd + beta for one row (gamma/beta may be null).
inline void write_normalized(const float* x, const float* gamma, const float* beta, float* y,
                             int64_t cols, float mean, float rstd) {
  for (int64_t c = 0; c < cols; ++c) {
    const float xhat = (x[c] - mean) * rstd;
    y[c] = (gamma ? gamma[c] : 1.0f) * xhat + (beta ? beta[c] : 0.0f);
  }
}

inline float row_mean(const float* x, int64_t cols) {
  float sum = 0;
  for (int64_t c = 0; c < cols; ++c) sum += x[c];
  return sum / static_cast<float>(cols);
}

inline float centred_squares(const float* x, int64_t cols, float mean) {
  float sum = 0;
  for (int64_t c = 0; c < cols; ++c) sum += (x[c] - mean) * (x[c] - mean);
  return sum;
}

}  // namespace normcheck::broken
