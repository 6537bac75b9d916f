// The Linear a norm-linear row (Op::layernorm_linear_fwd, rmsnorm_linear_fwd)
// needs on a benchmark shape: W of kOutFeatures x cols (a projection to 256
// features, so that every standard shape's W fits in memory), a bias and the
// output z, made on first use.
#pragma once

#include <cstdint>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck::bench {

inline constexpr int64_t kOutFeatures = 256;

class NormLinearArrays {
 public:
  // One call of a norm-linear `fn` on x (rows x cols) with gamma/beta (null: none).
  void run(LayerNormLinearFwdFn fn, const float* x, const float* gamma, const float* beta, int64_t rows,
           int64_t cols, float eps);
  void run(RmsNormLinearFwdFn fn, const float* x, const float* gamma, int64_t rows, int64_t cols, float eps);

 private:
  void prepare(int64_t rows, int64_t cols);
  std::vector<float> w_, bias_, z_;
};

}  // namespace normcheck::bench
