// Broken: RMSNorm followed by nan_to_num (NaN -> 0), a "safe" output seen in
// real code. On a row with a non-finite x it hides the fault: y is 0 where
// every convention is non-finite (the element that is +-inf in x, or every
// element of a row with a NaN), which evaluate()'s non-finite rule catches
// (docs/semantics.md, "Rows with a non-finite input").
#include <cmath>

#include "broken_kernels.h"
#include "normcheck/bounds.h"
#include "normcheck/invoke.h"

namespace normcheck::broken {
namespace {

void rmsnorm_nan_to_num(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                        float eps) {
  invoke(*find_kernel("rmsnorm_fwd.scalar"),
         {.rows = rows, .cols = cols, .eps = eps, .x = x, .gamma = gamma, .out = y, .stat = rrms});
  for (int64_t i = 0; i < rows * cols; ++i)
    if (std::isnan(y[i])) y[i] = 0.0f;
}

}  // namespace

Kernel nan_to_num_kernel() {
  return {"broken.rmsnorm_fwd.nan_to_num", Op::rmsnorm_fwd, Origin::control, DType::f32,
          "rmsnorm_fwd.scalar, then NaN -> 0 (wrong)", nc_rmsnorm_fwd_fn{rmsnorm_nan_to_num},
          default_bound(Op::rmsnorm_fwd)};
}

}  // namespace normcheck::broken
