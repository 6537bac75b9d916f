#include "allowance.h"

#include <cmath>
#include <limits>

namespace normcheck {
namespace evaluation {

double allowance_of(std::initializer_list<double> coefficients, double formula) {
  for (double k : coefficients)
    if (k == std::numeric_limits<double>::infinity()) return k;
  return std::isinf(formula) ? std::numeric_limits<double>::quiet_NaN() : formula;
}

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
  const double g = std::fabs(gamma), h = std::fabs(xhat);
  return evaluation::allowance_of({b.xhat_abs, b.xhat_rel, b.affine_rel, b.underflow_abs},
                                  g * (b.xhat_abs + b.xhat_rel * h) +
                                      b.affine_rel * (g * h + std::fabs(beta)) + b.underflow_abs);
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

}  // namespace normcheck
