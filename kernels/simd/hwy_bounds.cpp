#include "simd/hwy_bounds.h"

#include <algorithm>
#include <cmath>

#include "normcheck/float_format.h"

namespace normcheck::simd {

double centred_mean_error(double e_sigma, const RowCondition& c) {
  return e_sigma * std::min(std::sqrt(static_cast<double>(c.d)), c.kappa > 0 ? 1 / c.kappa : INFINITY);
}

// Rounding a float32 result to bf16/f16 storage: |fl16(v) - y| <= |v - y| +
// unit |v| <= (1 + unit) |v - y| + unit |y|, and |y| is bounded by the scales
// the Bound already uses (see hwy_bounds.h).
Bound with_16bit_outputs(Bound b, DType storage) {
  const double unit = unit_roundoff(storage), half_spacing = half_smallest_subnormal(storage);
  const double grow = 1 + unit;
  b.xhat_abs *= grow;
  b.underflow_abs = b.underflow_abs * grow + half_spacing;
  b.xhat_rel *= grow;
  b.affine_rel = b.affine_rel * grow + unit;
  // |dx| <= r (|g_i| + mean|g| + |xhat_i| mean|g xhat|)
  b.dx_g = b.dx_g * grow + unit;
  b.dx_mean_g = b.dx_mean_g * grow + unit;
  b.dx_xhat_mean_g *= grow;
  b.dx_proj_abs *= grow;
  b.dx_proj_rel = b.dx_proj_rel * grow + unit;
  return b;
}

}  // namespace normcheck::simd
