// Per-element error allowances of a kernel's declared Bound (kernel.h states
// the formulas), evaluated on the exact reference. evaluate() applies the same
// formulas but reports only the worst element; the invariants need every one. The invariant properties
// derive their tolerances from these: if K(x) and K(T x) are each within their
// allowance of exact values that T relates exactly, they differ by at most the
// sum of the two allowances.
#pragma once

#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

// The exact normalized values xhat (rows x cols, finite rows only) and the
// allowance of each y (forward) or dx (backward) element under kernel.bound.
struct Allowances {
  std::vector<double> xhat;
  std::vector<double> main;
};

Allowances allowances(const Kernel& kernel, const Problem& problem);

}  // namespace normcheck::props
