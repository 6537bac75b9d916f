// The row's scale of each main output: the magnitude of the terms an element
// is computed from, against which its ULP figure is taken (scaled_ulp_error,
// metrics.h; docs/semantics.md "Metrics"). Any float computation of an element
// errs in proportion to these terms, not to the element: x - mean carries the
// rounding of a mean of the row's values, so in xhat units the row's scale is
// kappa = mean|x| r (kernel.h, RowCondition), and a sum over a row or column
// carries the roundings of its terms. Where the exact value is below its
// scale (a result of cancellation) one of its own ULPs says nothing about the
// kernel.
#pragma once

#include <cmath>
#include <span>

#include "normcheck/reference.h"

namespace normcheck::evaluation {

// y_j = gamma_j xhat_j + beta_j: |gamma_j| kappa + |beta_j|. Inline: it
// is taken for every element of y.
inline double y_scale(const RowStats& s, double gamma, double beta) {
  return std::fabs(gamma) * s.condition.kappa + std::fabs(beta);
}
// dx_j = r (g_j - [LayerNorm] mean(g) - xhat_j mean(g xhat)): r (mean|g| + kappa mean|g xhat|).
double dx_scale(const RowStats& s, double mean_abs_g, double mean_abs_g_xhat);
// dgamma_j = sum_rows dy_j xhat_j: sum|dy_j xhat_j| + kappa sum|dy_j|, kappa the
// largest over the rows (the column condition's). dbeta_j = sum_rows dy_j has
// the scale sum|dy_j| itself.
double dgamma_scale(double kappa, double sum_abs_dy_xhat, double sum_abs_dy);
// z_i = sum_j W_ij (gamma_j xhat_j + beta_j) + b_i: T_i + kappa sum_j |W_ij gamma_j|
// (T_i = sum_j |W_ij| (|gamma_j xhat_j| + |beta_j|) + |b_i|, reference_linear.h;
// gamma empty: 1).
double z_scale(double kappa, std::span<const float> w_row, std::span<const float> gamma, double t);

}  // namespace normcheck::evaluation
