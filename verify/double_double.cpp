#include "normcheck/double_double.h"

#include <cmath>

namespace normcheck {

void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

DoubleDouble dot_dd(const double* a, const double* b, long n, long stride_b, double c) {
  // p carries the float64 sum, s the sum of every product's and addition's
  // exact error (fma gives a product's error exactly).
  double p = c, s = 0;
  for (long j = 0; j < n; ++j) {
    const double prod = a[j] * b[j * stride_b];
    const double prod_err = std::fma(a[j], b[j * stride_b], -prod);
    double sum, sum_err;
    two_sum(p, prod, sum, sum_err);
    p = sum;
    s += prod_err + sum_err;
  }
  DoubleDouble r;
  two_sum(p, s, r.hi, r.lo);
  return r;
}

}  // namespace normcheck
