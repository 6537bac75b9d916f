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
#include "bound_blocks.h"

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

double gamma_n(double n, double unit_roundoff) {
  if (n <= 0) return 0;
  const double nu = n * unit_roundoff;
  return nu >= 1 ? kInf : nu / (1 - nu);
}

double gamma_tilde(double n, double lambda, double unit_roundoff) {
  if (n <= 0) return 0;
  const double v = unit_roundoff;
  return std::expm1(lambda * std::sqrt(n) * v + n * v * v / (1 - v));
}

double gamma_model(double n, double lambda, double unit_roundoff) {
  const double g = gamma_n(n, unit_roundoff);
  return lambda > 0 ? std::min(g, gamma_tilde(n, lambda, unit_roundoff)) : g;
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
// with g = gamma_{d+2+k}. For k = 1 this refines the textbook (sigma^2 + delta^2 + eps)
// (1 +- gamma_{d+4}): delta^2 only ever increases w^.
MomentsError twopass_moments_error(const RowCondition& c, int scale_roundings, double lambda) {
  const double d = static_cast<double>(c.d);
  const double k = scale_roundings;
  MomentsError m;
  m.mean_rel = gamma_model(d - 1 + k, lambda);
  m.mean_underflow = kUnderflowUnit;
  m.mean_r = m.mean_rel * c.kappa + kUnderflowUnit * c.r;
  const double g = gamma_model(d + 2 + k, lambda);
  const double sigma_share = 1 - c.eps_share;
  const double eta_r2 = 0x1p-149 * (1 + gamma_model(d + k, lambda)) * c.r * c.r;
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

// Centred two-pass moments; U = unit, g(k) = gamma_k with U, D = mu - m,
// W = mean|x_i - m| <= sigma + |D| (Cauchy-Schwarz).
//  1. The centre. t_i = (x_i - m)(1 + d_i), |d_i| <= U; sum (x_i - m) = d D,
//     so S1 = d D + E, |E| <= g(n+1) d W, and c = (D + E/d)(1 + d'). S2 =
//     sum t_i^2 (1 + th'), |th'| <= g(n+1) (+1: a product without FMA), and
//     sum (x_i - m)^2 = d (sigma^2 + D^2): q = (sigma^2 + D^2)(1 + f),
//     |f| <= g(n+4). The test 16 fl(c^2) <= q gives |c| <= (k/4) sqrt(sigma^2
//     + D^2), k = sqrt((1 + g(n+4)) / (1 - U)), and |D| <= |c| / (1 - U) +
//     g(n+1)(sigma + |D|): t = |D|/sigma satisfies t <= al sqrt(1 + t^2) + be
//     with al = k / (4 (1 - U)(1 - g(n+1))), be = g(n+1) / (1 - g(n+1)), so
//     t <= (be + al sqrt(1 - al^2 + be^2)) / (1 - al^2) =: a1 (0.2582 when
//     n U is negligible); |D| r <= |D| / sigma <= a1, W r <= 1 + a1.
//  2. |c - D| r <= e_r := g(n+1)(1 + a1)(1 + U) + U a1.
//  3. var^ = fl(q - fl(c^2)): |var^ - sigma^2| r^2 <= b := b0 + U((1 - s) + b0),
//     b0 = g(n+4)((1 - s) + a1^2) + e_r (2 a1 + e_r) + U (a1 + e_r)^2
//     (|D^2 - c^2| = |D - c| |D + c|; s = eps_share); clamping at 0 only moves
//     var^ toward sigma^2; + eps: b' = b + U(1 + b); sqrt and the division
//     round once each: rho = (1 + U)^2 / sqrt(1 - b') - 1.
//  4. t r^ - c r^ = r^ [(x - mu)(1 + d_i) + (D - c) + D d_i]: with the
//     product rounded (or exact in an fma) and the difference rounded,
//     |v - xhat| <= eta |xhat| + A, eta = (1 + rho)(1 + U)^3 - 1,
//     A = (1 + rho)(1 + U)(e_r + g(2) a1 + U (a1 + e_r)).
//  5. m + c - mu = c - D: e_sigma = (1 + a1) g(n+1)(1 + U) + a1 U.
CentredError centred_twopass_error(double n, double unit, double eps_share) {
  const double U = unit, g1 = gamma_n(n + 1, U), g4 = gamma_n(n + 4, U);
  const double k = std::sqrt((1 + g4) / (1 - U));
  const double al = k / (4 * (1 - U) * (1 - g1)), be = g1 / (1 - g1);
  CentredError e;
  e.a1 = al < 1 ? (be + al * std::sqrt(1 - al * al + be * be)) / (1 - al * al) : kInf;
  e.e_r = g1 * (1 + e.a1) * (1 + U) + U * e.a1;
  const double b0 = g4 * ((1 - eps_share) + e.a1 * e.a1) + e.e_r * (2 * e.a1 + e.e_r) +
                    U * (e.a1 + e.e_r) * (e.a1 + e.e_r);
  const double b = b0 + U * ((1 - eps_share) + b0);
  const double b1 = b + U * (1 + b);
  e.rho = b1 < 1 ? (1 + U) * (1 + U) / std::sqrt(1 - b1) - 1 : kInf;
  e.eta = (1 + e.rho) * (1 + U) * (1 + U) * (1 + U) - 1;
  e.A = (1 + e.rho) * (1 + U) * (e.e_r + gamma_n(2, U) * e.a1 + U * (e.a1 + e.e_r));
  e.e_sigma = (1 + e.a1) * g1 * (1 + U) + e.a1 * U;
  return e;
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
  m.linear_rel = std::max(a.linear_rel, b.linear_rel);
  m.fold_weight_rel = std::max(a.fold_weight_rel, b.fold_weight_rel);
  m.fold_bias_rel = std::max(a.fold_bias_rel, b.fold_bias_rel);
  m.linear_abs = std::max(a.linear_abs, b.linear_abs);
  return m;
}

// ---- The default bounds ----
// What every correct two-pass float32 kernel meets, whichever of the usual
// forms it takes (docs/accuracy.md, "The default bound" and "Who the default
// bound admits"; tests/kernels/test_default_bound.cpp runs each form).

// rstd (or rrms) from w^ = fl(var^ + eps) takes at most 7 "roundings" in any of
// the admitted forms: fl(1/fl(sqrt(w^))) (2), a correctly rounded rsqrt (1),
// sqrt then a division of x - mu^ (2), or an rsqrt estimate y0 = (1 + e0)/sqrt(w^)
// with |e0| <= E = 1.5 2^-12 (x86 rsqrtps) refined by one Newton step
// y1 = fl(y0 fl(3/2 - fl(fl(fl(w^/2) y0) y0))), w^/2 exact (w^ >= 2^-125):
// with a = (w^/2) y0^2 = (1 + e0)^2 / 2 and the two products' 1 + theta_2,
//   y1 sqrt(w^) = [(1 + e0)(3/2 - a) - (1 + e0) a theta_2](1 + theta_2')
//               = [1 - 3 e0^2 / 2 - e0^3 / 2 - (1 + e0)^3 theta_2 / 2](1 + theta_2'),
// so |y1 sqrt(w^) - 1| <= (1 + 3E^2/2 + E^3/2 + (1 + E)^3 gamma_2 / 2)(1 + gamma_2) - 1
// = 6.38 u, within [(1 - u)^7, (1 - u)^-7] (3E^2/2 alone is 3.375 u: counting
// only the four roundings of the Newton step would not cover it).
constexpr int kDefaultRstdRoundings = 7;

// y of the gamma-folded scale/bias form: a = fl(r^ gamma), y^ = fl(fl(x a) + fl(beta - fl(mu^ a)))
// (or fmas). With z = (x - mu^) r^ (shifted_and_scaled, no rounding of the
// difference) and the products' and the shift's roundings e1, e2, e3:
//   S = gamma z (1 + e_a) + beta + x a e1 + beta e3 - mu^ a (e2 + e3 + e2 e3) + eta1 - eta2 (1 + e3),
//   |x a e1|     <= u (1+u)(1 + hi) |gamma| (|xhat| + kappa),
//   |mu^ a (..)| <= (2u + u^2)(1+u)(1 + hi) |gamma| (kappa + Delta)      (|mu^| r <= kappa + Delta),
//   |gamma z (1 + e_a) - gamma xhat| <= |gamma| ((1+u)(A + R |xhat|) + u |xhat|),
// and y^ = S (1 + e4): |y^ - y| <= (1+u) |S - y| + u (|gamma xhat| + |beta|).
// beta is rounded twice (e3, e4): affine_rel = (2 + u) u, where the other
// forms have u. eta1, eta2 <= 2^-150 are the products' underflow; a itself
// may underflow (|gamma| r^ < 2^-126), off by 2^-150 absolute, which costs
// 2^-150 (|x| + |mu^|)(1+u)^2 <= 2^-150 (1+u)^3 (max|xhat| + 2 kappa + Delta) / r:
// no multiple of |gamma|, so it goes into underflow_abs (also for the
// (x - mu^) fl(r^ gamma) association).
namespace {

double folded_gamma_underflow(const MomentsError& m, const RowCondition& c) {
  if (c.r <= 0) return 0;
  const double d = static_cast<double>(c.d);
  const double max_xhat = std::min(std::sqrt(std::max(d - 1, 0.0)), c.kappa + c.max_kappa);
  return kUnderflowUnit * std::pow(1 + u, 3) * (max_xhat + 2 * c.kappa + m.mean_r) / c.r;
}

Bound folded_scale_bias_bound(const MomentsError& m, RelErr rstd, const RowCondition& c) {
  const XhatError e = shifted_and_scaled(m.mean_r, rstd, 0);
  const double scaled = (1 + u) * (1 + rstd.hi);
  Bound b = affine_step(e, m, rstd);
  b.xhat_abs = (1 + u) * ((1 + u) * e.abs + u * scaled * c.kappa +
                          (2 * u + u * u) * scaled * (c.kappa + m.mean_r));
  b.xhat_rel = (1 + u) * ((1 + u) * e.rel + u + u * scaled);
  b.affine_rel = (2 + u) * u;
  b.underflow_abs = std::max((1 + u) * (2 + u) * kUnderflowUnit, m.mean_underflow) +
                    folded_gamma_underflow(m, c);
  return b;
}

}  // namespace

// The default LayerNorm forward bound, the element-wise max over these forms
// on two-pass moments with any summation order (gamma_{d-1} covers every tree):
//   - "/ d" as a division or as a product with fl(1/d): scale_roundings = 2;
//   - rstd in any of the forms of kDefaultRstdRoundings (7);
//   - subtract then scale, xhat = fl(fl(x - mu^) r^), times gamma in either
//     association ((x - mu^) fl(r^ gamma) too), fma or not: one extra product
//     (plus folded_gamma_underflow for the folded association);
//   - seed 004's scale/bias form fl(x r^ + fl(-mu^ r^)) * gamma + beta
//     (scale_bias_bound: the cancellation adds u (|xhat| + 2 kappa));
//   - the gamma-folded scale/bias form x a + (beta - mu^ a), a = r^ gamma
//     (folded_scale_bias_bound: 3 u kappa, and beta rounded twice).
namespace {

// The default LayerNorm forward bound under the sums' model `lambda`
// (twopass_moments_error): 0 the worst case, kTightLambda the tight standard.
Bound layernorm_fwd_bound_under(const RowCondition& c, double lambda) {
  const MomentsError m = twopass_moments_error(c, 2, lambda);
  const RelErr rstd = rstd_error(m.var_eps, kDefaultRstdRoundings, c);
  Bound subtract = subtract_then_scale_bound(m, rstd, 1);
  subtract.underflow_abs += folded_gamma_underflow(m, c);
  return bound_max(bound_max(subtract, scale_bias_bound(m, rstd, c)),
                   folded_scale_bias_bound(m, rstd, c));
}

}  // namespace

Bound default_layernorm_fwd_bound(const RowCondition& c) { return layernorm_fwd_bound_under(c, 0); }

// The default LayerNorm backward bound: twopass_layernorm_bwd_bound's
// derivation (kernels/scalar/layernorm_bwd_twopass.cpp, docs/accuracy_backward.md)
// redone for every admitted form, with the saved m^ = fl(mu), r^ = fl(r):
//   - xhat h_j, in pass 1, pass 2 or dgamma, stored or recomputed, in any of
//       fl(fl(x - m^) r^)            = (xhat + e_m)(1 + theta_3),     |e_m| <= u kappa + 2^-150 r
//         (|m^ - mu| <= u |mu| + 2^-150: a mean below 2^-126 rounds to the subnormal grid,
//         and r scales that absolute error into xhat),
//       fl(fl(x r^) + fl(-m^ r^))    = xhat (1 + theta_3) + F (1 + theta_2),
//         F = e_m (1 + rho) + (mu r)(1 + rho) e1 - m^ r^ e2, |F| <= (3 + u) u kappa,
//       fma(x, r^, fl(-m^ r^))       (F smaller),
//     i.e. h_j = (xhat_j + E_j)(1 + theta_3) with a per-element
//     |E_j| <= e = ((3 + u) u kappa + 2^-150 r) (1 + gamma_2)/(1 - gamma_3) + 2^-149 (1+u)/(1 - gamma_3)
//     (the last term: both products of the scale/bias form may underflow).
//     The twopass derivation only ever bounds |E| (sum_j g_j E_j / d <= e mean|g|),
//     so a per-element shift changes nothing but e.
//   - the row means mg, mp by division or by fl(1/d) (one rounding more), any
//     summation order; mp = mean(g h) or fl(mean(g fl(x - m^)) r^), both
//     (1/d) sum g_j (xhat_j + E_j)(1 + theta_{d+6});
//   - dx from g_i, mg, h_i mp combined by two additions in any order (each
//     term passes through at most two), r^ applied last or to each term first
//     (r^ g - r^ mg - (r^ h) mp), fma or not:
//       g term:  1 + rho + product + 2 additions       -> gamma_5
//       G term:  (d + 2) + rho + product + 2           -> gamma_{d+6}
//       P term:  3 (h_i) + (d + 6) (mp) + product h_i mp + rho + product + 2 -> gamma_{d+14}
//     and the twopass algebra gives dx_proj_rel = gamma_{d+14},
//     dx_xhat_mean_g = dx_proj_abs = e (1 + gamma_{d+14}), dx_mean_g = gamma_{d+6} + e^2 (1 + gamma_{d+14});
//   - dgamma terms fl(dy h) or fl(fl(dy fl(x - m^)) r^): dy (xhat + E)(1 + theta_4),
//     summed over rows in any order: gamma_{rows+3}, (1 + gamma_{rows+3}) e; dbeta gamma_{rows-1}.
// Gradual underflow (c.r known), 2^-150 per product or quotient that lands
// below 2^-126: the twopass count 1 + r (1 + g)(5 + H (2 + H)) (H = max|h|)
// plus 3 for the products done on the dx scale when r^ comes first, plus
// r^2 H (1 + g) when mp's products g (x - m^) underflow before r^ scales them;
// fl(r^ h_i) underflowing costs 2^-150 |mp| <= 2^-150 (1 + g)(M_gx + e M_g),
// i.e. 2^-150 (1 + g) / r on dx_proj_abs and e times that on dx_mean_g.
// dgamma: per row the product and, for the unscaled form, dy (x - m^) times r.
Bound default_layernorm_bwd_bound(const RowCondition& c) {
  const double d = static_cast<double>(c.d);
  const double rows = static_cast<double>(c.rows);
  const double shift_cover = (1 + gamma_n(2)) / (1 - gamma_n(3));
  const double e = ((3 + u) * u * c.kappa + kUnderflowUnit * c.r) * shift_cover +
                   0x1p-149 * (1 + u) / (1 - gamma_n(3));
  const double g_long = gamma_n(d + 14);
  const double g_rows = gamma_n(rows + 3);
  const double max_xhat = std::min(std::sqrt(std::max(d - 1, 0.0)), c.kappa + c.max_kappa);
  const double max_h = (max_xhat + e) * (1 + gamma_n(3));
  const double r_first = c.r > 0 ? kUnderflowUnit * (1 + g_long) / c.r : 0;

  Bound b;
  b.dx_g = gamma_n(5);
  b.dx_mean_g = gamma_n(d + 6) + e * e * (1 + g_long) + e * r_first;
  b.dx_xhat_mean_g = e * (1 + g_long);
  b.dx_proj_abs = e * (1 + g_long) + r_first;
  b.dx_proj_rel = g_long;
  b.dgamma_rel = g_rows;
  b.dgamma_abs = (1 + g_rows) * e;
  b.dbeta_rel = gamma_n(rows - 1);
  const double dx_underflow =
      kUnderflowUnit * (4 + c.r * (1 + g_long) * (5 + max_h * (2 + max_h) + c.r * max_h));
  const double dgamma_underflow = kUnderflowUnit * rows * (1 + g_rows) * (1 + u) * (1 + c.r);
  b.underflow_abs = std::max(dx_underflow, dgamma_underflow);
  return b;
}

// The default RMSNorm forward bound: rmsnorm_fwd_bound's derivation
// (kernels/scalar/rmsnorm_fwd.cpp) for every admitted form: the row scaled by
// a power of two or not, "/ d" by division or fl(1/d), any summation order,
// rrms in any of the kDefaultRstdRoundings forms, y = fl(fl(x r^) gamma),
// fl(x fl(r^ gamma)) or fl(fl(x / fl(sqrt(q))) gamma).
// q = fl(fl(sum fl(x_j^2)) / d + eps): every summand carries at most
// 1 + (d - 1) + 2 + 1 = d + 3 factors and all are >= 0, so q/Q in
// [(1-u)^(d+3), (1+u)^(d+3)]; rrms adds 7 roundings outside the root:
//   |rrms^ sqrt(Q) - 1| <= S = gamma_{(d+3)/2 + 7} = gamma_{(d+17)/2}.
// Underflow in q: scaled rows, tau = d 2^-147 (rmsnorm_fwd_bound); unscaled
// rows, each square off by 2^-150 and the scale by 2^-150, so q is off by
// 2^-149 (1 + gamma_{d+1}) against Q = 1/r^2: tau = 2^-149 (1 + gamma_{d+1}) r^2.
// So q/Q lies in [(1-u)^(d+3) - tau, (1+u)^(d+3) + tau], and rrms^ = r (1 + rho)
// with rho in rstd_error's interval for it (the LayerNorm forward's step from
// w^/T to r^, the same 7 roundings). Once tau >= (1-u)^(d+3), q may be 0 and
// rrms^ +inf: every square underflows to 0 when max|x| < 2^-75 (x = [2^-120],
// eps = 0: Q = 2^-240, r = 2^120, tau ~ 2^91), and then the bound promises
// nothing, as the LayerNorm default does on the same row (there eta r^2 >= 1
// makes w^/T's lower end 0, twopass_moments_error). eps > 0 keeps it finite:
// r^2 <= 1/eps, so tau <= 2^-149 (1 + gamma_{d+1}) / eps. Where tau is small,
// S' = S + tau (1 + S) (as rmsnorm_fwd_bound; it is the larger of the two
// there, gamma_n >= (1-u)^-n - 1); the bound takes the larger of both, each an
// upper bound on |rrms^ sqrt(Q) - 1| wherever the interval's is finite.
// y: xhat_rel = (1 + S')(1 + u)^2 - 1 (two products, or
// the quotient and gamma), xhat_abs as rmsnorm_fwd_bound; fl(r^ gamma) may
// underflow, off by 2^-150, costing 2^-150 (1 + u) |x| <= 2^-150 (1 + u) max_kappa / r.
//
// Under the tight standard's model (lambda > 0) each sum's d + 3 factors give
// q/Q within gamma_model(d + 3, lambda) of 1 (all terms >= 0: q/Q lies between
// the least and the largest of the terms' factors), and rrms^ is rstd_error's
// interval from it alone: S, the halved worst-case exponent, is not used.
namespace {

Bound rmsnorm_fwd_bound_under(const RowCondition& c, double lambda) {
  const double d = static_cast<double>(c.d);
  const double tau = std::max(d * 0x1p-147, 0x1p-149 * (1 + gamma_model(d + 1, lambda)) * c.r * c.r);
  RelErr q_over_q = {.lo = 1 - std::pow(1 - u, d + 3) + tau, .hi = std::pow(1 + u, d + 3) - 1 + tau};
  double s_total = 0;
  if (lambda > 0) {
    const double g = gamma_model(d + 3, lambda);
    q_over_q = {.lo = std::min(q_over_q.lo, g + tau), .hi = std::min(q_over_q.hi, g + tau)};
  } else {
    const double s = gamma_n((d + 17) / 2);
    s_total = s + tau * (1 + s);
  }
  const RelErr rrms = rstd_error(q_over_q, kDefaultRstdRoundings, c);
  s_total = std::max(s_total, std::max(rrms.lo, rrms.hi));
  Bound b;
  b.stat_rel = s_total;
  b.xhat_rel = (1 + s_total) * (1 + u) * (1 + u) - 1;
  b.xhat_abs = (std::sqrt(d / (1 - 2 * u)) * (1 + s_total) * (1 + u) + 1) * kUnderflowUnit;
  b.underflow_abs = kUnderflowUnit * (1 + (c.r > 0 ? (1 + u) * c.max_kappa / c.r : 0));
  return b;
}

}  // namespace

Bound default_rmsnorm_fwd_bound(const RowCondition& c) { return rmsnorm_fwd_bound_under(c, 0); }

// ---- The tight standard ----
// The default forward bounds under Higham and Mary's model (gamma_tilde,
// bounds.h): what a careful kernel meets on a realistic row, where its sums'
// roundings behave as independent and of mean zero (docs/accuracy.md, "The
// tight standard", states the rows and the failure probability).
Bound tight_layernorm_fwd_bound(const RowCondition& c) { return layernorm_fwd_bound_under(c, kTightLambda); }
Bound tight_rmsnorm_fwd_bound(const RowCondition& c) { return rmsnorm_fwd_bound_under(c, kTightLambda); }

BoundFn tight_bound(BoundFn bound) {
  if (bound == &default_layernorm_fwd_bound) return &tight_layernorm_fwd_bound;
  if (bound == &default_rmsnorm_fwd_bound) return &tight_rmsnorm_fwd_bound;
  return nullptr;
}

// The default RMSNorm backward bound: rmsnorm_bwd_bound's derivation
// (kernels/scalar/rmsnorm_bwd.cpp) for every admitted form: mp = mean(g h) or
// fl(mean(g x) r^), by division or fl(1/d) (d + 5 factors either way: g, the
// product, d - 1 additions, 2 for the scale, and h's or the final product's 2),
// dx = fl(r^ fl(g - fl(h mp))), fl(r^ g) - fl(fl(r^ h) mp) or an fma:
//   g term gamma_4, P term 2 (h_i) + (d + 5) + product + rho + product + subtraction = gamma_{d+11};
// dgamma terms fl(dy h) or fl(fl(dy x) r^): gamma_{rows+2}.
// Underflow as in the LayerNorm default above (no mean, so h = x r^ underflows
// once: the 2 (1 + g) 2^-150 of rmsnorm_bwd_bound on the scale terms).
Bound default_rmsnorm_bwd_bound(const RowCondition& c) {
  const double d = static_cast<double>(c.d);
  const double rows = static_cast<double>(c.rows);
  const double g_long = gamma_n(d + 11);
  const double g_rows = gamma_n(rows + 2);
  const double max_h = std::sqrt(d) * (1 + gamma_n(2)) + 1;
  const double underflow_scale = 2 * (1 + g_long) * kUnderflowUnit;
  const double r_first = c.r > 0 ? kUnderflowUnit * (1 + g_long) / c.r : 0;
  Bound b;
  b.dx_g = gamma_n(4);
  b.dx_proj_rel = g_long;
  b.dx_mean_g = underflow_scale;
  b.dx_xhat_mean_g = underflow_scale;
  b.dx_proj_abs = underflow_scale + r_first;
  b.dgamma_rel = g_rows;
  b.dgamma_abs = (1 + g_rows) * kUnderflowUnit;
  const double dx_underflow =
      kUnderflowUnit * (4 + c.r * (1 + g_long) * (2 + max_h * (2 + max_h) + c.r * max_h));
  b.underflow_abs =
      std::max(dx_underflow, kUnderflowUnit * rows * (1 + g_rows) * (1 + u) * (1 + c.r));
  return b;
}

BoundFn default_bound(Op op) {
  switch (op) {
    case Op::layernorm_fwd: return &default_layernorm_fwd_bound;
    case Op::layernorm_bwd: return &default_layernorm_bwd_bound;
    case Op::rmsnorm_fwd: return &default_rmsnorm_fwd_bound;
    case Op::rmsnorm_bwd: return &default_rmsnorm_bwd_bound;
    case Op::layernorm_linear_fwd: return &default_layernorm_linear_fwd_bound;
    case Op::rmsnorm_linear_fwd: return &default_rmsnorm_linear_fwd_bound;
  }
  return &default_layernorm_fwd_bound;
}

}  // namespace normcheck
