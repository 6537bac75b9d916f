#include "allowance.h"

#include <cmath>
#include <limits>
#include <span>

#include "normcheck/bounds.h"

namespace normcheck {
namespace evaluation {

double mean_allowance(const Bound& b, const RowStats& s) {
  return allowance_of({b.mean_rel, b.underflow_abs}, b.mean_rel * s.mean_abs_x + b.underflow_abs);
}

double stat_allowance(const Bound& b, const RowStats& s) {
  return allowance_of({b.stat_rel, b.underflow_abs}, b.stat_rel * s.r + b.underflow_abs);
}

double dgamma_allowance(const Bound& b, double sum_abs_dy_xhat, double sum_abs_dy) {
  return allowance_of({b.dgamma_rel, b.dgamma_abs, b.underflow_abs},
                      b.dgamma_rel * sum_abs_dy_xhat + b.dgamma_abs * sum_abs_dy + b.underflow_abs);
}

double dbeta_allowance(const Bound& b, double sum_abs_dy) {
  return allowance_of({b.dbeta_rel, b.underflow_abs}, b.dbeta_rel * sum_abs_dy + b.underflow_abs);
}

}  // namespace evaluation

double y_allowance(const Bound& b, double gamma, double beta, double xhat) {
  return evaluation::y_allowance_of(b, gamma, beta, xhat);
}

double dx_allowance(const Bound& b, double r, double g, double xhat, double mean_abs_g,
                    double mean_abs_g_xhat) {
  const double h = std::fabs(xhat);
  return evaluation::allowance_of(
      {b.dx_g, b.dx_mean_g, b.dx_xhat_mean_g, b.dx_proj_abs, b.dx_proj_rel, b.underflow_abs},
      r * (b.dx_g * std::fabs(g) + (b.dx_mean_g + b.dx_xhat_mean_g * h) * mean_abs_g +
           (b.dx_proj_abs + b.dx_proj_rel * h) * mean_abs_g_xhat) +
          b.underflow_abs);
}

double z_allowance(const Bound& b, std::span<const float> w_row, std::span<const float> gamma,
                   std::span<const float> beta, std::span<const double> xhat, double t, double s,
                   double c_abs, double exact_error) {
  double carried = 0;  // sum_j |W_ij| yallow_j (a zero W_ij carries nothing, whatever yallow_j)
  for (std::size_t j = 0; j < w_row.size(); ++j) {
    if (w_row[j] == 0) continue;
    carried += std::fabs(static_cast<double>(w_row[j])) *
               y_allowance(b, gamma.empty() ? 1.0 : gamma[j], beta.empty() ? 0.0 : beta[j], xhat[j]);
  }
  // Every sum here and in the reference's scales is a float64 sum of
  // non-negative terms, low by at most a relative gamma_(2d+2)(2^-53).
  const double slack = 1 + gamma_n(2.0 * static_cast<double>(w_row.size()) + 2, kUnitRoundoff64);
  return evaluation::allowance_of(
      {b.xhat_abs, b.xhat_rel, b.affine_rel, b.underflow_abs, b.linear_rel, b.fold_weight_rel, b.fold_bias_rel,
       b.linear_abs},
      (carried + b.linear_rel * t + b.fold_weight_rel * s + b.fold_bias_rel * c_abs + b.linear_abs) * slack +
          exact_error);
}

}  // namespace normcheck
