#include "norm_linear_workload.h"

#include <cmath>

namespace normcheck::bench {

void NormLinearArrays::prepare(int64_t rows, int64_t cols) {
  const auto weights = static_cast<std::size_t>(kOutFeatures * cols);
  if (w_.size() != weights) {
    // W_ij = +-(0.5 + (k*7 + (k/cols)*13) mod 64 / 64) / sqrt(cols): plausible magnitudes,
    // no zeros or subnormals (speed does not depend on the values otherwise).
    w_.resize(weights);
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    for (std::size_t k = 0; k < weights; ++k) {
      const float m = 0.5f + static_cast<float>((k * 7 + k / static_cast<std::size_t>(cols) * 13) % 64) / 64.0f;
      w_[k] = (k % 3 == 0 ? -m : m) * scale;
    }
    bias_.assign(static_cast<std::size_t>(kOutFeatures), 0.125f);
  }
  z_.resize(static_cast<std::size_t>(rows * kOutFeatures));
}

void NormLinearArrays::run(LayerNormLinearFwdFn fn, const float* x, const float* gamma, const float* beta,
                           int64_t rows, int64_t cols, float eps) {
  prepare(rows, cols);
  fn(x, gamma, beta, w_.data(), bias_.data(), z_.data(), rows, cols, kOutFeatures, eps);
}

void NormLinearArrays::run(RmsNormLinearFwdFn fn, const float* x, const float* gamma, int64_t rows,
                           int64_t cols, float eps) {
  prepare(rows, cols);
  fn(x, gamma, w_.data(), bias_.data(), z_.data(), rows, cols, kOutFeatures, eps);
}

}  // namespace normcheck::bench
