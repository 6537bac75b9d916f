// Sums and dot products as unevaluated double-doubles (TwoSum, TwoProd via
// fma): the exact references of the ops that end in a Linear and the folding
// library (verify/fold) compute with them.
#pragma once

namespace normcheck {

// a + b = s + e exactly (Knuth's TwoSum), s = fl(a + b).
void two_sum(double a, double b, double& s, double& e);

// hi + lo, |lo| <= ulp(hi) / 2.
struct DoubleDouble {
  double hi = 0, lo = 0;
};

// sum_j a_j b_(j stride_b) + c as a double-double (Ogita, Rump and Oishi's Dot2
// without its final rounding); error <= gamma_(n+1)(2^-53)^2 (sum_j |a_j b_j| + |c|)
// while no product underflows.
DoubleDouble dot_dd(const double* a, const double* b, long n, long stride_b, double c);

}  // namespace normcheck
