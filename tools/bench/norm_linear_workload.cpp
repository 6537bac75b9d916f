#include "norm_linear_workload.h"

#include <cmath>

namespace normcheck::bench {

void NormLinearArrays::fill(KernelArgs& args) {
  const int64_t cols = args.cols;
  const auto weights = static_cast<std::size_t>(kOutFeatures * cols);
  if (w_.size() != weights) {
    // W_ij = +-(0.5 + (k*7 + (k/cols)*13) mod 64 / 64) / sqrt(cols), k = i cols + j:
    // plausible magnitudes, no zeros or subnormals (speed does not depend on
    // the values otherwise).
    w_.resize(weights);
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    for (std::size_t k = 0; k < weights; ++k) {
      const float m = 0.5f + static_cast<float>((k * 7 + k / static_cast<std::size_t>(cols) * 13) % 64) / 64.0f;
      w_[k] = (k % 3 == 0 ? -m : m) * scale;
    }
    bias_.assign(static_cast<std::size_t>(kOutFeatures), 0.125f);
  }
  z_.resize(static_cast<std::size_t>(args.rows * kOutFeatures));
  args.weight = w_.data();
  args.bias = bias_.data();
  args.out_features = kOutFeatures;
  args.out = z_.data();
}

}  // namespace normcheck::bench
