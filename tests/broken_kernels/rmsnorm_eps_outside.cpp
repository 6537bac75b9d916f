// Broken: rrms = 1 / (sqrt(mean(x^2)) + eps) instead of 1 / sqrt(mean(x^2) + eps),
// RMSNorm's version of seed 001's (std + eps). Wrong when mean(x^2) is
// comparable to eps or to eps^2.
#include <cmath>

#include "broken_kernels.h"
#include "normcheck/bounds.h"

namespace normcheck::broken {
namespace {

void rmsnorm_eps_outside(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                         int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float squares = 0;
    for (int64_t c = 0; c < cols; ++c) squares += row[c] * row[c];
    const float rs = 1.0f / (std::sqrt(squares / static_cast<float>(cols)) + eps);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (gamma ? gamma[c] : 1.0f) * (row[c] * rs);
    if (rrms) rrms[r] = rs;
  }
}

}  // namespace

Kernel rmsnorm_eps_outside_kernel() {
  return {"broken.rmsnorm_fwd.eps_outside_sqrt", Op::rmsnorm_fwd, Origin::control, DType::f32,
          "1 / (rms + eps) (wrong)", nc_rmsnorm_fwd_fn{rmsnorm_eps_outside}, default_bound(Op::rmsnorm_fwd)};
}

}  // namespace normcheck::broken
