// The Linear a norm-linear row (Op::layernorm_linear_fwd, rmsnorm_linear_fwd)
// needs on a benchmark shape: W of kOutFeatures x cols (a projection to 256
// features, so that every standard shape's W fits in memory), a bias and the
// output z, made on first use.
#pragma once

#include <cstdint>
#include <vector>

#include "normcheck/invoke.h"

namespace normcheck::bench {

inline constexpr int64_t kOutFeatures = 256;

class NormLinearArrays {
 public:
  // Points args.weight, bias and out (z) at arrays for args.rows x args.cols,
  // and sets out_features.
  void fill(KernelArgs& args);

 private:
  std::vector<float> w_, bias_, z_;
};

}  // namespace normcheck::bench
