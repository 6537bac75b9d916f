#include "scale.h"

#include <cmath>

namespace normcheck::evaluation {

double dx_scale(const RowStats& s, double mean_abs_g, double mean_abs_g_xhat) {
  return s.r * (mean_abs_g + s.condition.kappa * mean_abs_g_xhat);
}

double dgamma_scale(double kappa, double sum_abs_dy_xhat, double sum_abs_dy) {
  return sum_abs_dy_xhat + kappa * sum_abs_dy;
}

double z_scale(double kappa, std::span<const float> w_row, std::span<const float> gamma, double t) {
  double w_gamma = 0;  // sum_j |W_ij gamma_j|
  for (std::size_t j = 0; j < w_row.size(); ++j)
    w_gamma += std::fabs(static_cast<double>(w_row[j]) * (gamma.empty() ? 1.0 : static_cast<double>(gamma[j])));
  return t + kappa * w_gamma;
}

}  // namespace normcheck::evaluation
