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

// The exact normalized values xhat (rows x cols) and the allowance of each y
// (forward) or dx (backward) element under kernel.bound; +inf on a row with
// sigma^2 + eps = 0, which evaluate() does not check either.
struct Allowances {
  std::vector<double> xhat;
  std::vector<double> main;
};

Allowances allowances(const Kernel& kernel, const Problem& problem);

// The bound promises something for every element of the row: every allowance
// and xhat finite. Row-wise tolerances skip the other rows, as evaluate()
// skips their elements.
bool row_promised(const Allowances& allowances, int64_t row, int64_t cols);

}  // namespace normcheck::props
