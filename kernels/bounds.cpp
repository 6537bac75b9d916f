// Error-bound building blocks and the default bound.
//
// Model (Higham, Accuracy and Stability of Numerical Algorithms, ch. 2-3):
// every float operation is correctly rounded, fl(a op b) = (a op b)(1 + e)
// with |e| <= u = 2^-24, and a product of n such factors (or their inverses)
// is 1 + theta_n with |theta_n| <= gamma_n = n u / (1 - n u). Two exceptions
// are accounted for explicitly: a product or quotient whose result underflows
// (|result| < 2^-126) is off by up to kUnderflowUnit = 2^-150 in absolute
// terms instead, and a sum or difference is exact when its result is
// subnormal. Overflow is excluded by each kernel's InputRange, except that
// fl(var^ + eps) may overflow for eps near FLT_MAX; rstd_error allows for it.
//
// Errors of xhat are written as A + R |xhat_i| (A, R >= 0). One more rounded
// product z^ = fl(z) of a z with |z - xhat| <= A + R |xhat| satisfies
//   |z^ - xhat| <= (1 + u)(A + R |xhat|) + u |xhat| + 2^-150,
// i.e. A <- (1 + u) A + 2^-150 and R <- (1 + u) R + u ("one_more_product").
// The affine step fl(fl(gamma * xhat^) + beta) then gives
//   |y^ - y| <= (1 + u) |fl(gamma xhat^) - gamma xhat| + u (|gamma xhat| + |beta|)
//            <= |gamma| ((1+u)^2 A + (1+u)((1+u) R + u) |xhat|)
//               + u (|gamma xhat| + |beta|) + (1+u) 2^-150,
// which is Bound{xhat_abs, xhat_rel, affine_rel = u, underflow_abs}. An fma
// (one rounding of gamma xhat^ + beta) or a missing gamma or beta drops
// roundings, so the same coefficients cover those forms.
#include "normcheck/bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace normcheck {
namespace {

constexpr double u = kUnitRoundoff;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFloatMax = 0x1.fffffep127;

// An error A + R |xhat| of some approximation of xhat.
struct XhatError {
  double abs = 0, rel = 0;
};

XhatError one_more_product(XhatError e) {
  return {(1 + u) * e.abs + kUnderflowUnit, (1 + u) * e.rel + u};
}

// The error of the product (x - mu^)(1 + e_sub) * r^ before it is rounded,
// with r^ = r (1 + rho), rho in [-lo, hi]:
//   (x - mu - delta)(1 + e_sub)(1 + rho) r - xhat
//     = xhat ((1 + e_sub)(1 + rho) - 1) - delta r (1 + e_sub)(1 + rho).
XhatError shifted_and_scaled(double mean_r, RelErr rstd, int subtraction_roundings) {
  const double sub_hi = std::pow(1 + u, subtraction_roundings);
  const double sub_lo = std::pow(1 - u, subtraction_roundings);
  return {mean_r * sub_hi * (1 + rstd.hi),
          std::max(sub_hi * (1 + rstd.hi) - 1, 1 - sub_lo * (1 - rstd.lo))};
}

// The affine step on top of xhat^'s error (see the file comment).
Bound affine_step(XhatError e, const MomentsError& m, RelErr rstd) {
  Bound b;
  b.xhat_abs = (1 + u) * (1 + u) * e.abs;
  b.xhat_rel = (1 + u) * ((1 + u) * e.rel + u);
  b.affine_rel = u;
  b.mean_rel = m.mean_rel;
  b.stat_rel = std::max(rstd.lo, rstd.hi);
  b.underflow_abs = std::max((1 + u) * kUnderflowUnit, m.mean_underflow);
  return b;
}

}  // namespace

double gamma_n(double n) {
  if (n <= 0) return 0;
  const double nu = n * u;
  return nu >= 1 ? kInf : nu / (1 - nu);
}

// Two-pass moments. Write s = eps r^2 (eps_share), kappa = mean|x| r.
// Mean: any summation order of d terms has |s^ - sum x| <= gamma_{d-1} sum|x|
// (every partial sum lies on a path of at most d - 1 rounded additions), and
// each of the k = scale_roundings roundings of "/ d" adds one factor:
//   |mu^ - mu| <= gamma_{d-1+k} mean|x| + 2^-150            (2^-150: s^/d may underflow)
//   delta r := |mu^ - mu| r <= gamma_{d-1+k} kappa + 2^-150 r.
// Variance: sum_i (x_i - mu) = 0 makes mean_i (x_i - mu^)^2 = sigma^2 + delta^2
// exactly. Each term fl(x_i - mu^)^2 carries 3 roundings (the difference twice,
// the square), the sum d - 1, the scale k; all terms are >= 0, so
//   var^ = (sigma^2 + delta^2)(1 + theta_{d+2+k}) + eta,   |eta| <= 2^-149 (1 + gamma_{d+k}),
// eta collecting the squares' and the scale's underflow. With w^ = fl(var^ + eps)
// and T = sigma^2 + eps = 1/r^2, (1 - s) = sigma^2 r^2:
//   w^ / T in [(1 - (1-s) g - eta r^2)(1 - u), (1 + (1-s) g + delta_r^2 (1 + g) + eta r^2)(1 + u)]
// with g = gamma_{d+2+k}. For k = 1 this is the (sigma^2 + delta^2 + eps)(1 +- gamma_{d+4})
// of the sketch in issue 2, refined to show that delta^2 only ever increases w^.
MomentsError twopass_moments_error(const RowCondition& c, int scale_roundings) {
  const double d = static_cast<double>(c.d);
  const double k = scale_roundings;
  MomentsError m;
  m.mean_rel = gamma_n(d - 1 + k);
  m.mean_underflow = kUnderflowUnit;
  m.mean_r = m.mean_rel * c.kappa + kUnderflowUnit * c.r;
  const double g = gamma_n(d + 2 + k);
  const double sigma_share = 1 - c.eps_share;
  const double eta_r2 = 0x1p-149 * (1 + gamma_n(d + k)) * c.r * c.r;
  m.var_eps.lo = 1 - (1 - sigma_share * g - eta_r2) * (1 - u);
  m.var_eps.hi =
      (1 + sigma_share * g + m.mean_r * m.mean_r * (1 + g) + eta_r2) * (1 + u) - 1;
  return m;
}

// r^ = fl(1 / fl(sqrt(w^))): each rounding multiplies by (1 + e) or divides by
// it, so `roundings` of them lie in [(1 - u)^n, (1 - u)^-n], and
//   r^ / r in [(1 - u)^n / sqrt(1 + hi), (1 - u)^-n / sqrt(1 - lo)].
// If T (1 + hi) may exceed FLT_MAX, w^ may round to +inf and r^ to 0: lo = 1.
// sqrt never underflows and 1/sqrt(w^) >= 2^-64, so no underflow term.
RelErr rstd_error(RelErr var_eps, int roundings, const RowCondition& c) {
  const double n = roundings;
  RelErr e;
  e.lo = 1 - std::pow(1 - u, n) / std::sqrt(1 + var_eps.hi);
  e.hi = var_eps.lo >= 1 ? kInf : std::pow(1 - u, -n) / std::sqrt(1 - var_eps.lo) - 1;
  if (c.r > 0 && (1 + var_eps.hi) / (c.r * c.r) >= kFloatMax) e.lo = 1;
  return e;
}

// xhat^ = fl(fl(x - mu^) * r^): the difference rounds once (exact when
// subnormal), the product once more (plus extra_products), then the affine step.
Bound subtract_then_scale_bound(const MomentsError& m, RelErr rstd, int extra_products) {
  XhatError e = shifted_and_scaled(m.mean_r, rstd, 1);
  e = one_more_product(e);
  for (int i = 0; i < extra_products; ++i) e = one_more_product(e);
  return affine_step(e, m, rstd);
}

// xhat^ = fl(fl(x * r^) + b^), b^ = fl(-mu^ * r^) (seed 004's scale and bias).
// Before the sum rounds:
//   fl(x r^) + b^ = (x - mu^) r^ + x r^ e1 - mu^ r^ e2 + eta1 + eta2
// where (x - mu^) r^ is shifted_and_scaled with no rounding of the difference,
//   |x r^ e1|   <= u (1 + hi) |x| r     <= u (1 + hi)(|xhat| + kappa)   (|x| r <= |xhat| + |mu| r, |mu| <= mean|x|)
//   |mu^ r^ e2| <= u (1 + hi)(kappa + delta r),
// and eta1, eta2 <= 2^-150 the products' underflow. The sum's rounding is one
// more (1 + e) without underflow term (a sum is exact when subnormal); an fma
// for x * r^ + b^ drops e1. So the cancellation costs u (|xhat| + 2 kappa):
// far more than two-pass's subtraction when |mu| >> sigma, and the sum's
// rounding is relative to |xhat| only, like in two-pass.
Bound scale_bias_bound(const MomentsError& m, RelErr rstd, const RowCondition& c) {
  XhatError e = shifted_and_scaled(m.mean_r, rstd, 0);
  e.abs += u * (1 + rstd.hi) * (2 * c.kappa + m.mean_r) + 2 * kUnderflowUnit;
  e.rel += u * (1 + rstd.hi);
  e = {(1 + u) * e.abs, (1 + u) * e.rel + u};  // the rounding of the sum
  return affine_step(e, m, rstd);
}

Bound bound_max(const Bound& a, const Bound& b) {
  Bound m;
  m.xhat_abs = std::max(a.xhat_abs, b.xhat_abs);
  m.xhat_rel = std::max(a.xhat_rel, b.xhat_rel);
  m.affine_rel = std::max(a.affine_rel, b.affine_rel);
  m.mean_rel = std::max(a.mean_rel, b.mean_rel);
  m.stat_rel = std::max(a.stat_rel, b.stat_rel);
  m.dx_g = std::max(a.dx_g, b.dx_g);
  m.dx_mean_g = std::max(a.dx_mean_g, b.dx_mean_g);
  m.dx_proj_abs = std::max(a.dx_proj_abs, b.dx_proj_abs);
  m.dx_proj_rel = std::max(a.dx_proj_rel, b.dx_proj_rel);
  m.dgamma_rel = std::max(a.dgamma_rel, b.dgamma_rel);
  m.dbeta_rel = std::max(a.dbeta_rel, b.dbeta_rel);
  m.dx_xhat_mean_g = std::max(a.dx_xhat_mean_g, b.dx_xhat_mean_g);
  m.dgamma_abs = std::max(a.dgamma_abs, b.dgamma_abs);
  m.underflow_abs = std::max(a.underflow_abs, b.underflow_abs);
  return m;
}

// The default LayerNorm forward bound: what every correct two-pass float32
// kernel with plain (any order) summation meets, whichever of the usual forms
// it takes:
//   - "/ d" as a division or as a product with fl(1/d): scale_roundings = 2;
//   - r^ from w^ by fl(1/fl(sqrt)), a correctly rounded rsqrt, or sqrt then a
//     division of (x - mu^) (one rounding fewer each), or an rsqrt estimate
//     refined to within 2 ulp (relative error <= 4u): 4 roundings;
//   - x - mu^ times r^ times gamma in either association, fma or not: one
//     extra product;
//   - blocked, pairwise or SIMD-lane summation: gamma_{d-1} covers every order;
//   - the scale/bias form fl(x * r^ + fl(-mu^ * r^)) on two-pass moments, whose
//     extra cancellation term u (|xhat| + 2 kappa) is small next to two-pass's
//     own gamma_d kappa shift.
// The bound is the element-wise max over those forms.
Bound default_layernorm_fwd_bound(const RowCondition& c) {
  const MomentsError m = twopass_moments_error(c, 2);
  const RelErr rstd = rstd_error(m.var_eps, 4, c);
  return bound_max(subtract_then_scale_bound(m, rstd, 1), scale_bias_bound(m, rstd, c));
}

BoundFn default_bound(Op op) {
  switch (op) {
    case Op::layernorm_fwd: return &default_layernorm_fwd_bound;
    case Op::layernorm_bwd: return &twopass_layernorm_bwd_bound;
    case Op::rmsnorm_fwd: return &rmsnorm_fwd_bound;
    case Op::rmsnorm_bwd: return &rmsnorm_bwd_bound;
  }
  return &default_layernorm_fwd_bound;
}

}  // namespace normcheck
