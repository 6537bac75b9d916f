// layernorm_fwd.hwy: LayerNorm forward, float32, Highway SIMD dispatched at
// run time, threaded over rows (or over chunks of a few long rows). The row
// algorithm is in layernorm_fwd_hwy-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_fwd_hwy-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdHwy(const float* x, const float* gamma, const float* beta, float* y,
                     float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  for_each_layernorm_fwd_row([]<bool kSplit>(auto... row_args) { FastRow<kSplit>(row_args...); },
                             x, gamma, beta, y, mean, rstd, rows, cols, eps);
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
HWY_EXPORT(LayerNormFwdHwy);

void layernorm_fwd_hwy(const float* x, const float* gamma, const float* beta, float* y,
                       float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormFwdHwy)(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

// The bound of the float32 two-pass row (rows that fall back to float64 meet
// accurate_layernorm_fwd_bound, which is tighter in every coefficient).
// u = 2^-24, g(k) = gamma_k, n = summation_depth(d) (row_partition.h; the
// lane-parallel, chunked sums), e = m - mu, alpha = |e| r.
//  mean  m = fl(fl(sum x)/d): |e| <= g(n+1) mean|x|, so alpha <= g(n+1) kappa
//        (constant rows: m is their value, e = 0).
//  var   t_i = fl(x_i - m) = (x_i - m)(1+d_i); each t_i^2 is rounded at most
//        once (mul + add without FMA) and summed with depth n, then / d:
//        v = (var + e^2)(1 + th(n+4)).
//  r     w = fl(v + eps): |w r^2 - 1| <= g(n+5)(1 - eps_share) + u eps_share
//        + alpha^2 (1 + g(n+5)) =: beta; sqrt and the division round once each:
//        |r^/r - 1| <= (1 - beta)^-1/2 (1 + u)^2 - 1 =: rho.
//  xhat  fl(t_i r^) = (xhat_i - e r)(1 + d)(1 + d')(1 + rho):
//        |xh - xhat| <= tau (|xhat| + alpha) + alpha, tau = (1+u)^2 (1+rho) - 1.
//  y     fl(gamma xh + beta) (FMA, or mul + add: g(2)): the xhat error grows
//        by (1+u)^2, plus g(2)(|gamma xhat| + |beta|). Underflow: xh may be
//        off by 2^-150 more (scaled by gamma: in xhat_abs), y by 2^-150
//        (underflow_abs).
// The row range is all of float: rows whose float sums overflow or underflow
// are recomputed in float64.
Bound hwy_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const double alpha = gamma_n(n + 1, u) * c.kappa;
  const double beta = gamma_n(n + 5, u) * (1 - c.eps_share) + u * c.eps_share +
                      alpha * alpha * (1 + gamma_n(n + 5, u));
  const double rho = beta < 1 ? (1 + u) * (1 + u) / std::sqrt(1 - beta) - 1 : INFINITY;
  const double tau = (1 + u) * (1 + u) * (1 + rho) - 1;
  Bound bound;
  bound.xhat_abs = (alpha + tau * alpha + kUnderflowUnit) * (1 + u) * (1 + u);
  bound.xhat_rel = tau * (1 + u) * (1 + u);
  bound.affine_rel = gamma_n(2, u);
  bound.mean_rel = gamma_n(n + 1, u);
  bound.stat_rel = rho;
  bound.underflow_abs = kUnderflowUnit;
  return bound;
}

}  // namespace simd

extern const Kernel kLayerNormFwdHwy;
constinit const Kernel kLayerNormFwdHwy{
    .name = "layernorm_fwd.hwy",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway SIMD (run-time dispatch), two-pass float in L1, lane-parallel sums; "
                 "threaded over rows or chunks; float64 fallback for overflow/underflow rows",
    .fn = &simd::layernorm_fwd_hwy,
    .bound = &simd::hwy_layernorm_fwd_bound,
};

}  // namespace normcheck
#endif  // HWY_ONCE
