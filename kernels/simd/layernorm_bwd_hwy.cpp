// layernorm_bwd.hwy: LayerNorm backward, float32, Highway SIMD dispatched at
// run time, threaded over fixed row blocks (dgamma/dbeta: one partial row per
// block, added in block order, so the bits do not depend on the thread count).
// The row algorithm is in layernorm_bwd_hwy-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_bwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormBwdHwy(const float* dy, const float* x, const float* gamma, const float* mean,
                     const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                     int64_t cols) {
  LayerNormBwdRows(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
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
HWY_EXPORT(LayerNormBwdHwy);

void layernorm_bwd_hwy(const float* dy, const float* x, const float* gamma, const float* mean,
                       const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                       int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormBwdHwy)(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
}

// u = 2^-24, g(k) = gamma_k, n = summation_depth(d) (row sums), m = the
// dgamma/dbeta depth: up to kBwdRowsPerBlock rows in sequence, then the block
// partials in sequence. The saved statistics are floats: mean^ = mu(1 + d),
// rstd^ = r(1 + d'), so
//   xhat^ = fl(fl(x - mean^) rstd^) = (xhat + (mu - mean^) r)(1 + th3):
//   |xhat^ - xhat| <= g(3)|xhat| + e,  e = (1 + g(3)) u kappa.
//   g^ = fl(gamma dy) = g(1 + d).
//   A^ = fl(fl(sum g^)/d):       |A^ - mean g| <= g(n+2) mean|g|.
//   B^ = fl(fl(sum g^ xhat^)/d) (each product rounded at most once):
//        |B^ - mean(g xhat)| <= g(n+6) mean|g xhat| + (1 + g(n+3)) e mean|g|.
//   dx^ = fl(rstd^ fl(g^ - fl(xhat^ B^ + A^))): the inner value is off by
//        u|g| + |A^ - A| + |xhat^ - xhat||B^| + |xhat||B^ - B| + g(2)|xhat^ B^ + A^|,
//        the outer product and rstd^ add g(3) of the result, and |dx|/r <=
//        |g| + mean|g| + |xhat| mean|g xhat|. Collected with G = g(n+16) (it
//        dominates every g(k) product above):
//   dx_g = g(5), dx_mean_g = G + 2 e^2, dx_xhat_mean_g = e (1 + G)^2,
//   dx_proj_abs = e (1 + G)^2, dx_proj_rel = G.
//   dgamma: the terms fl(dy xhat^) (one rounding at most) are off by
//        g(4)|dy xhat| + (1 + g(1)) e|dy|, then summed with depth m:
//        dgamma_rel = g(m+4), dgamma_abs = e (1 + g(m+1)).
//   dbeta: dbeta_rel = g(m).
// A subnormal saved mean is off by up to 2^-150 more (|mean^ - mu| <= u|mu| +
// 2^-150), so e also carries 2^-150 r. Gradual underflow: the operation counts
// are those of twopass_layernorm_bwd_bound (kernels/scalar/layernorm_bwd_twopass.cpp,
// derivation there) with G in place of gamma_{d+12}: each product or quotient
// below 2^-126 is off by up to 2^-150 absolute, giving 2 (1 + G) 2^-150 on the
// scale terms, 2^-150 (1 + r (1 + G)(5 + H (2 + H))) on dx (H the largest
// |xhat^|) and 2^-150 rows (1 + g(m+4)) on dgamma.
Bound hwy_layernorm_bwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double tiny = 0x1p-150;
  const double d = static_cast<double>(c.d);
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const double m = static_cast<double>(std::min<int64_t>(c.rows, kBwdRowsPerBlock) +
                                       ceil_div(c.rows, kBwdRowsPerBlock));
  const double e = (1 + gamma_n(3, u)) * (u * c.kappa + tiny * c.r);
  const double G = gamma_n(n + 16, u);
  const double max_xhat = std::min(std::sqrt(std::max(d - 1, 0.0)), c.kappa + c.max_kappa);
  const double max_h = (max_xhat + e) * (1 + gamma_n(3, u));
  const double underflow_scale = 2 * (1 + G) * tiny;
  Bound b;
  b.dx_g = gamma_n(5, u);
  b.dx_mean_g = G + 2 * e * e + e * underflow_scale;
  b.dx_xhat_mean_g = e * (1 + G) * (1 + G) + underflow_scale;
  b.dx_proj_abs = e * (1 + G) * (1 + G) + underflow_scale;
  b.dx_proj_rel = G;
  b.dgamma_rel = gamma_n(m + 4, u);
  b.dgamma_abs = (e + tiny) * (1 + gamma_n(m + 1, u));
  b.dbeta_rel = gamma_n(m, u);
  b.underflow_abs = std::max(tiny * (1 + c.r * (1 + G) * (5 + max_h * (2 + max_h))),
                             tiny * static_cast<double>(c.rows) * (1 + gamma_n(m + 4, u)));
  return b;
}
}  // namespace simd

extern const Kernel kLayerNormBwdHwy;
constinit const Kernel kLayerNormBwdHwy{
    .name = "layernorm_bwd.hwy",
    .op = Op::layernorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway SIMD (run-time dispatch): float sums of g and g*xhat, dx in a second "
                 "pass; threaded over 32-row blocks, dgamma/dbeta partials merged in block order",
    .fn = &simd::layernorm_bwd_hwy,
    .bound = &simd::hwy_layernorm_bwd_bound,
    // As the scalar backward: the saved rstd stays a normal float (r > 2^-126)
    // and x - mean cannot overflow.
    .range = {.max_abs_x = 0x1p124},
    .family = Family::highway,
};

}  // namespace normcheck
#endif  // HWY_ONCE
