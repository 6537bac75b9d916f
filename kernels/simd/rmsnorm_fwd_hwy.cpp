// rmsnorm_fwd.hwy: RMSNorm forward, float32 in/out, Highway SIMD dispatched at
// run time, threaded over rows (or chunks of a few long rows). The row
// algorithm (float64 math, every finite row handled) is in
// rmsnorm_fwd_hwy-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormFwdHwy(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                   int64_t cols, float eps) {
  RmsNormFwdRows(x, gamma, y, rrms, rows, cols, eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>

#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwy);

void rmsnorm_fwd_hwy(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                     int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwy)(x, gamma, y, rrms, rows, cols, eps);
}

// U = 2^-53, u = 2^-24, gU(k) = gamma_k with U, n = summation_depth(d).
//   x_i^2 is exact in float64 (48 significant bits), so ss^ = sum x^2 (1 + th(n));
//   / d and + eps round once each (both terms positive): w = (ms + eps)(1 + th(n+2)).
//   r64 = fl(1/fl(sqrt w)): |r64/r - 1| <= (1 - gU(n+2))^-1/2 (1 + U)^2 - 1 =: rho.
//   y = fl32(fl64(fl64(x r64) gamma)): xhat64 = x r64 (1 + U) off by
//   (1 + rho)(1 + U) - 1 relative, times gamma (1 + U), rounded to float (u,
//   or 2^-150 absolute if y is subnormal).
//   rrms = fl32(r64): rho + u (1 + rho).
Bound hwy_rmsnorm_fwd_bound(const RowCondition& c) {
  constexpr double U = kUnitRoundoff64, u = kUnitRoundoff;
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const double rho = (1 + U) * (1 + U) / std::sqrt(1 - gamma_n(n + 2, U)) - 1;
  Bound b;
  b.xhat_rel = ((1 + rho) * (1 + U) * (1 + U) - 1) * (1 + u);
  b.affine_rel = u;
  b.stat_rel = rho + u * (1 + rho);
  b.underflow_abs = kUnderflowUnit;
  return b;
}
}  // namespace simd

extern const Kernel kRmsNormFwdHwy;
constinit const Kernel kRmsNormFwdHwy{
    .name = "rmsnorm_fwd.hwy",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway SIMD (run-time dispatch): float64 sum of squares, y = x r gamma in "
                 "float64 rounded once; threaded over rows or chunks",
    .fn = &simd::rmsnorm_fwd_hwy,
    .bound = &simd::hwy_rmsnorm_fwd_bound,
    .family = Family::highway,
};

}  // namespace normcheck
#endif  // HWY_ONCE
