// Bounds of a normalization followed by a Linear (kernel.h, Bound: the z
// formula). Notation: u = 2^-24, eta = 2^-150 (what a float32 product that
// underflows loses), g = gamma_(d+1) = (d+1) u / (1 - (d+1) u); N is the bound
// of the norm kernel that computes the normalized row, so its y_j (with the
// row's gamma_j, beta_j) is within
//   e_j = |gamma_j| (N.xhat_abs + N.xhat_rel |xhat_j|) + N.affine_rel A_j + N.underflow_abs
// of a_j = gamma_j xhat_j + beta_j, A_j = |gamma_j xhat_j| + |beta_j|
// (kernel.h: y's allowance). The exact result is z_i = sum_j W_ij a_j + b_i.
//
// The Linear: fl(sum_j W_ij v_j + b_i), a dot product of d float32 terms and
// the bias, each product rounded (fl(p) = p (1 + delta) or p + zeta when it
// underflows, |delta| <= u, |zeta| <= eta; an addition that underflows is
// exact) and at most d + 1 roundings on any term, in any summation order:
//   |computed - (sum_j W_ij v_j + b_i)| <= g (sum_j |W_ij v_j| + |b_i|) + d eta (1 + g)
// (Higham, Accuracy and Stability, 3.1, with the underflow term carried
// through the additions).
#include <cmath>

#include "bound_blocks.h"
#include "normcheck/bounds.h"
#include "norm_linear.h"

namespace normcheck::fold_rows {
namespace {

constexpr double kEta = kUnderflowUnit;  // 2^-150

// Every coefficient of y's allowance times k (+inf stays +inf).
Bound scaled_y(const Bound& norm, double k) {
  Bound b;
  b.xhat_abs = k * norm.xhat_abs;
  b.xhat_rel = k * norm.xhat_rel;
  b.affine_rel = k * norm.affine_rel;
  b.underflow_abs = k * norm.underflow_abs;
  return b;
}

}  // namespace

// Unfolded: v_j = y_j, |y_j| <= A_j + e_j, so
//   |z^_i - z_i| <= sum_j |W_ij| e_j                    (the norm's error, carried by W)
//                 + g (sum_j |W_ij| (A_j + e_j) + |b_i|) + d eta (1 + g)
//              = (1 + g) sum_j |W_ij| e_j + g T_i + d eta (1 + g):
// y's coefficients times (1 + g), linear_rel = g, linear_abs = d eta (1 + g).
Bound unfolded_linear_bound(const Bound& norm, int64_t d) {
  const double g = gamma_n(static_cast<double>(d) + 1);
  Bound b = scaled_y(norm, 1 + g);
  b.linear_rel = g;
  b.linear_abs = static_cast<double>(d) * kEta * (1 + g);
  return b;
}

// Folded: W'_ij = W_ij gamma_j (1 + delta_ij) + zeta_ij (one rounding of a
// product exact in float64), b'_i within u |c_i| + (1 + u) e_c + eta of
// c_i = sum_j W_ij beta_j + b_i, e_c = gamma_(d+1)(2^-53) T_i bounding the
// float64 sum's error (norm_linear.h), and the norm without affine gives
// xhat^_j within h_j = N.xhat_abs + (N.xhat_rel + N.affine_rel) |xhat_j| + N.underflow_abs
// of xhat_j (e_j at gamma = 1, beta = 0). Then
//   W'_ij xhat^_j - W_ij gamma_j xhat_j = W'_ij (xhat^_j - xhat_j) + (W'_ij - W_ij gamma_j) xhat_j,
//   |.| <= ((1 + u) |W_ij gamma_j| + eta) h_j + (u |W_ij gamma_j| + eta) |xhat_j|,
// and the dot product adds g (sum_j |W'_ij| |xhat^_j| + |b'_i|) + d eta (1 + g) with
// |W'_ij| |xhat^_j| <= ((1 + u) |W_ij gamma_j| + eta)(|xhat_j| + h_j),
// |b'_i| <= (1 + u)(|c_i| + e_c) + eta. Collecting:
//   |z'^_i - z_i| <= (1 + u)(1 + g) sum_j |W_ij gamma_j| h_j
//                  + (u + g (1 + u)) S_i + (u + g (1 + u)) |c_i| + (1 + u)(1 + g) e_c
//                  + eta (1 + g) (sum_j (|xhat_j| + h_j) + 1) + d eta (1 + g).
// In the z formula, sum_j |W_ij| yallow_j with affine_rel = underflow_abs = 0 is
// sum_j |W_ij gamma_j| (xhat_abs + xhat_rel |xhat_j|), so
//   xhat_abs = (1 + u)(1 + g)(N.xhat_abs + N.underflow_abs),
//   xhat_rel = (1 + u)(1 + g)(N.xhat_rel + N.affine_rel),
//   fold_weight_rel = fold_bias_rel = u + g (1 + u),
//   linear_rel = (1 + u)(1 + g) gamma_(d+1)(2^-53)       (e_c <= that times T_i),
// and with |xhat_j| <= sqrt(d) (LayerNorm: |x_j - mu| <= sqrt(d) sigma;
// RMSNorm: |x_j| <= sqrt(d mean(x^2))), so h_j <= N.xhat_abs + N.underflow_abs
// + (N.xhat_rel + N.affine_rel) sqrt(d):
//   linear_abs = eta (1 + g) (d (sqrt(d) (1 + N.xhat_rel + N.affine_rel) + N.xhat_abs
//                + N.underflow_abs) + 1) + d eta (1 + g).
Bound folded_linear_bound(const Bound& norm, int64_t d) {
  constexpr double u = kUnitRoundoff;
  const double dd = static_cast<double>(d);
  const double g = gamma_n(dd + 1);
  const double k = (1 + u) * (1 + g);
  Bound b;
  b.xhat_abs = k * (norm.xhat_abs + norm.underflow_abs);
  b.xhat_rel = k * (norm.xhat_rel + norm.affine_rel);
  b.fold_weight_rel = u + g * (1 + u);
  b.fold_bias_rel = u + g * (1 + u);
  b.linear_rel = k * gamma_n(dd + 1, kUnitRoundoff64);
  const double h_sum = dd * (std::sqrt(dd) * (1 + norm.xhat_rel + norm.affine_rel) + norm.xhat_abs +
                             norm.underflow_abs);
  b.linear_abs = kEta * (1 + g) * (h_sum + 1) + dd * kEta * (1 + g);
  return b;
}

}  // namespace normcheck::fold_rows

namespace normcheck {

// The default bound of a norm followed by a Linear: what an implementation
// meets that normalizes with the default norm bound and then applies the
// Linear in float32, unfolded or folded (the larger of the two bounds,
// coefficient by coefficient).
Bound default_layernorm_linear_fwd_bound(const RowCondition& c) {
  const Bound norm = default_layernorm_fwd_bound(c);
  return bound_max(fold_rows::unfolded_linear_bound(norm, c.d), fold_rows::folded_linear_bound(norm, c.d));
}

Bound default_rmsnorm_linear_fwd_bound(const RowCondition& c) {
  const Bound norm = default_rmsnorm_fwd_bound(c);
  return bound_max(fold_rows::unfolded_linear_bound(norm, c.d), fold_rows::folded_linear_bound(norm, c.d));
}

}  // namespace normcheck
