// Building blocks of the kernels' bounds (kernels/bounds.cpp): what the
// statistics and the normalization of each algorithm family are off by. Used
// by the kernel files to state their bounds; not installed (the public
// bounds are in normcheck/bounds.h).
#pragma once

#include "normcheck/bounds.h"

namespace normcheck {

// Building blocks of the forward bounds (kernels/bounds.cpp; derivations there
// and in docs/accuracy.md). Quantities "in r units" are multiplied by the exact
// r, so that an error of the mean in r units is directly an error of xhat.

// A computed positive quantity q^ relative to the exact q: q^/q in [1 - lo, 1 + hi].
struct RelErr {
  double lo = 0, hi = 0;
};

// What a forward kernel's statistics are off by.
struct MomentsError {
  double mean_rel = 0;  // |mu^ - mu| <= mean_rel * mean|x| + mean_underflow
  double mean_underflow = 0;  // absolute part of the mean's error due to underflow
  double mean_r = 0;    // |mu^ - mu| * r, everything included: the shift of every xhat
  RelErr var_eps;       // fl(var^ + eps) relative to sigma^2 + eps
};

// Two-pass moments: mu^ = fl(sum x) / d, var^ = fl(sum fl(x - mu^)^2) / d,
// w^ = fl(var^ + eps), with any summation order and `scale_roundings`
// roundings for each "/ d" (1: a division; 2: a product with fl(1/d)).
// `lambda` > 0: each gamma_n of a sum is gamma_model(n, lambda) (bounds.h),
// the tight standard's probabilistic bound; 0: the worst case.
MomentsError twopass_moments_error(const RowCondition& c, int scale_roundings, double lambda = 0);

// Welford/Chan moments in the cascade of kernels/scalar/welford_cascade.h,
// var^ = M2^ / d, w^ = fl(var^ + eps) (kernels/scalar/layernorm_fwd_welford.cpp).
MomentsError welford_moments_error(const RowCondition& c);

// r^ computed from w^ with `roundings` correctly rounded operations
// (2: fl(1 / fl(sqrt(w^)))); hi is +inf when w^ may be 0.
RelErr rstd_error(RelErr var_eps, int roundings, const RowCondition& c);

// y of "xhat^ = fl(fl(x - mu^) * r^)" with `extra_products` more rounded
// products on the way (e.g. x * fl(r^ * gamma)), then fl(fl(gamma * xhat^) + beta)
// (or one fma). mean_rel/stat_rel/underflow_abs are filled from the moments.
Bound subtract_then_scale_bound(const MomentsError& m, RelErr rstd, int extra_products);

// y of seed 004's form: xhat^ = fl(fl(x * r^) + fl(-mu^ * r^)) (or an fma),
// then fl(fl(xhat^ * gamma) + beta). |x_i| r <= |xhat_i| + kappa bounds what the
// cancellation costs.
Bound scale_bias_bound(const MomentsError& m, RelErr rstd, const RowCondition& c);

// Centred two-pass moments (the Highway forward kernels: layernorm_fwd.hwy in
// float32, layernorm_fwd.accurate in float64; docs/accuracy_accurate.md):
// t_i = fl(x_i - m) about a centre m, S1 = sum t_i, S2 = sum t_i^2 with
// summation depth n, c = fl(S1/d), q = fl(S2/d), kept only once
// 16 fl(c^2) <= q; var^ = fl(q - fl(c^2)) clamped at 0, r^ = fl(1/fl(sqrt(
// fl(var^ + eps)))), v = fl(fl(t r^) - fl(c r^)) (or an fma), in arithmetic
// of unit roundoff `unit`. Quantities in units of the exact r, sigma or xhat.
struct CentredError {
  double a1;       // |m - mu| r, bounded by the centring test alone
  double e_r;      // |c - (mu - m)| r
  double rho;      // |r^/r - 1|
  double eta, A;   // |v - xhat| <= eta |xhat| + A
  double e_sigma;  // |m + c - mu| / sigma
};
CentredError centred_twopass_error(double n, double unit, double eps_share);

// The element-wise max of two bounds: what either of two algorithms meets.
Bound bound_max(const Bound& a, const Bound& b);

}  // namespace normcheck
