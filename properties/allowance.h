// Per-element error allowances of a kernel's declared Bound, evaluated on the
// exact reference with evaluate()'s own y_allowance/dx_allowance/row_condition
// (evaluate.h): evaluate() reports only the worst element, the invariants need
// every one. The invariant properties
// derive their tolerances from these: if K(x) and K(T x) are each within their
// allowance of exact values that T relates exactly, they differ by at most the
// sum of the two allowances.
#pragma once

#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

// The exact normalized values xhat and main outputs (y or dx) (rows x cols)
// and the allowance of each y (forward) or dx (backward) element under
// kernel.bound, decided as evaluate() decides it: +inf (nothing promised) on a
// row evaluate() does not check (row_checked: ill-posed, or a backward row
// whose saved statistic is not within u) and where a coefficient is +inf; 0 on
// a row with non-finite x or dy, whose output must be NaN exactly.
struct Allowances {
  std::vector<double> xhat;
  std::vector<double> exact;
  std::vector<double> main;
};

Allowances allowances(const Kernel& kernel, const Problem& problem);

// The bound promises a finite value near the exact one for every element of
// the row: every allowance and xhat finite, and |exact| + allowance within the
// float range (beyond it a kernel may overflow to an infinity, which
// evaluate() accepts). Row-wise tolerances that sum a row's outputs skip the
// other rows.
bool row_promised(const Allowances& allowances, int64_t row, int64_t cols);

}  // namespace normcheck::props
