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
#include "bound_blocks.h"
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

// The bound of the float32 centred row (rows that fall back to float64 meet
// accurate_layernorm_fwd_bound, which is tighter in every coefficient).
// centred_twopass_error (kernels/bounds.cpp) with u = 2^-24 and n =
// summation_depth(d) (row_partition.h; the lane-parallel, chunked sums) gives
// a1, rho and |v - xhat| <= eta |xhat| + A for v = fma(fl(x - m), r^,
// -fl(c r^)) (d < 2^24, exact in float), none of them depending on kappa.
// The rest:
//  underflow  squares t_i^2 that underflow lose < 2^-149 each, at most
//        d 2^-149 <= 2^-69 S2 (rows with S2 < 2^-80 d take the float64 row),
//        and a subnormal c^2 loses 2^-150 <= 2^-69 q (16 c^2 <= q): each is
//        less than the u that one more rounding adds to g(n+4), so the terms
//        are taken at depth n + 2. A subnormal fl(c r^) or v is off by 2^-150
//        more each: 2^-149 in xhat_abs.
//  y     fl(gamma v + beta) (FMA, or mul + add: g(2)): |gamma| (A + eta |xhat|
//        + 2^-149)(1 + g(2)) + g(2)(|gamma xhat| + |beta|), and 2^-150 if y is
//        subnormal (underflow_abs).
//  mean  fl(m + c): |m + c - mu| <= e_m mean|x| (centred_mean_error), then
//        u: (1 + u) e_m + u.
//  rstd  rho.
Bound hwy_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const CentredError e = centred_twopass_error(n + 2, u, c.eps_share);
  const double e_m = centred_mean_error(e.e_sigma, c);
  Bound bound;
  bound.xhat_abs = (e.A + 2 * kUnderflowUnit) * (1 + gamma_n(2, u));
  bound.xhat_rel = e.eta * (1 + gamma_n(2, u));
  bound.affine_rel = gamma_n(2, u);
  bound.mean_rel = (1 + u) * e_m + u;
  bound.stat_rel = e.rho;
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
    .algorithm = "Highway SIMD (run-time dispatch), centred two-pass float in L1 (mean as m + c, "
                 "sum and squares in one pass), lane-parallel sums; threaded over rows or chunks; "
                 "float64 fallback for uncentred, overflow and underflow rows",
    .fn = &simd::layernorm_fwd_hwy,
    .bound = &simd::hwy_layernorm_fwd_bound,
    .family = Family::highway,
};

}  // namespace normcheck
#endif  // HWY_ONCE
