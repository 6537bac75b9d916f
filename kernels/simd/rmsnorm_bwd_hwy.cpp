// rmsnorm_bwd.hwy: RMSNorm backward, float32, Highway SIMD dispatched at run
// time, threaded over fixed row blocks (dgamma bit-identical for every thread
// count). The row algorithm is in rmsnorm_bwd_hwy-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_bwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormBwdHwy(const float* dy, const float* x, const float* gamma, const float* rrms,
                   float* dx, float* dgamma, int64_t rows, int64_t cols) {
  RmsNormBwdRows(dy, x, gamma, rrms, dx, dgamma, rows, cols);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>

#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormBwdHwy);

void rmsnorm_bwd_hwy(const float* dy, const float* x, const float* gamma, const float* rrms,
                     float* dx, float* dgamma, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormBwdHwy)(dy, x, gamma, rrms, dx, dgamma, rows, cols);
}

// u = 2^-24, g(k) = gamma_k, n = summation_depth(d), m the dgamma depth (as
// in layernorm_bwd.hwy). Saved rrms^ = r(1 + d), so xhat^ = fl(x rrms^) =
// xhat(1 + th2) and g^ = fl(gamma dy) = g(1 + d): no absolute shift (no mean).
//   B^ = fl(fl(sum g^ xhat^)/d) (products rounded at most once):
//        |B^ - mean(g xhat)| <= g(n+5) mean|g xhat|.
//   dx^ = fl(rrms^ fl(g^ - xhat^ B^)) (one rounding with FMA, two without):
//        inner off by u|g| + g(2)|xhat||B| + |xhat||B^ - B|(1 + g(2)) + g(2) of
//        |g| + |xhat| mean|g xhat|; the outer product and rrms^ add g(2):
//   dx_g = g(5), dx_proj_rel = g(n+12).
//   dgamma: terms dy xhat^ off by g(3), summed with depth m: g(m+3).
// Gradual underflow: the operation counts of rmsnorm_bwd_bound
// (kernels/scalar/rmsnorm_bwd.cpp, derivation there) with G = g(n+12) in place
// of gamma_{d+10}: 2 (1 + G) 2^-150 on the scale terms, 2^-150 (1 + r (1 + G)
// (2 + H (2 + H))) on dx with H = sqrt(d)(1 + g(2)) + 1, 2^-150 rows (1 + g(m+3))
// on dgamma.
Bound hwy_rmsnorm_bwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double tiny = 0x1p-150;
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const double m = static_cast<double>(std::min<int64_t>(c.rows, kBwdRowsPerBlock) +
                                       ceil_div(c.rows, kBwdRowsPerBlock));
  const double G = gamma_n(n + 12, u);
  const double max_h = std::sqrt(static_cast<double>(c.d)) * (1 + gamma_n(2, u)) + 1;
  const double underflow_scale = 2 * (1 + G) * tiny;
  Bound b;
  b.dx_g = gamma_n(5, u);
  b.dx_proj_rel = G;
  b.dx_mean_g = underflow_scale;
  b.dx_xhat_mean_g = underflow_scale;
  b.dx_proj_abs = underflow_scale;
  b.dgamma_rel = gamma_n(m + 3, u);
  b.dgamma_abs = (1 + gamma_n(m + 3, u)) * tiny;
  b.underflow_abs = std::max(tiny * (1 + c.r * (1 + G) * (2 + max_h * (2 + max_h))),
                             tiny * static_cast<double>(c.rows) * (1 + gamma_n(m + 3, u)));
  return b;
}
}  // namespace simd

extern const Kernel kRmsNormBwdHwy;
constinit const Kernel kRmsNormBwdHwy{
    .name = "rmsnorm_bwd.hwy",
    .op = Op::rmsnorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway SIMD (run-time dispatch): float sum of g*xhat, dx in a second pass; "
                 "threaded over 32-row blocks, dgamma partials merged in block order",
    .fn = &simd::rmsnorm_bwd_hwy,
    .bound = &simd::hwy_rmsnorm_bwd_bound,
    .range = {.max_abs_x = 0x1p124},  // as rmsnorm_bwd.scalar: the saved rrms stays normal,
    .family = Family::highway,
};

}  // namespace normcheck
#endif  // HWY_ONCE
