// What a Bound allows each output element: the formulas of kernel.h (Bound),
// written once. Each includes Bound::underflow_abs. A coefficient of +inf
// promises nothing for its output: the allowance is then +inf (never
// inf * 0 = NaN); where every coefficient is finite but an input is non-finite
// and makes a scale infinite, the allowance is NaN (evaluate.h).
// y_allowance, dx_allowance and z_allowance are public (evaluate.h).
#pragma once

#include <cmath>
#include <initializer_list>
#include <limits>

#include "normcheck/evaluate.h"

namespace normcheck::evaluation {

// +inf when one of `coefficients` is +inf, else `formula`, NaN where it is
// infinite. Inline: y's and dx's allowances take it for every element.
inline double allowance_of(std::initializer_list<double> coefficients, double formula) {
  for (double k : coefficients)
    if (k == std::numeric_limits<double>::infinity()) return k;
  return std::isinf(formula) ? std::numeric_limits<double>::quiet_NaN() : formula;
}

// y_allowance (evaluate.h), inline: the ranges of y take it for every element.
inline double y_allowance_formula(const Bound& b, double gamma, double beta, double xhat) {
  const double g = std::fabs(gamma), h = std::fabs(xhat);
  return g * (b.xhat_abs + b.xhat_rel * h) + b.affine_rel * (g * h + std::fabs(beta)) + b.underflow_abs;
}
inline double y_allowance_of(const Bound& b, double gamma, double beta, double xhat) {
  return allowance_of({b.xhat_abs, b.xhat_rel, b.affine_rel, b.underflow_abs},
                      y_allowance_formula(b, gamma, beta, xhat));
}
// Whether every coefficient of y's allowance is finite: then y_allowance_of
// is y_allowance_formula, or NaN where that is infinite, and a loop over a
// row may take the formula alone. (At gamma = beta = xhat = 0 the formula is
// underflow_abs, finite with the coefficients: +inf only from allowance_of's
// rule.)
inline bool y_coefficients_finite(const Bound& b) {
  return y_allowance_of(b, 0, 0, 0) != std::numeric_limits<double>::infinity();
}

// mean: mean_rel * mean|x|
double mean_allowance(const Bound& b, const RowStats& s);
// rstd or rrms: stat_rel * r
double stat_allowance(const Bound& b, const RowStats& s);
// dgamma_j: dgamma_rel * sum_rows |dy_j xhat_j| + dgamma_abs * sum_rows |dy_j|
double dgamma_allowance(const Bound& b, double sum_abs_dy_xhat, double sum_abs_dy);
// dbeta_j: dbeta_rel * sum_rows |dy_j|
double dbeta_allowance(const Bound& b, double sum_abs_dy);

}  // namespace normcheck::evaluation
