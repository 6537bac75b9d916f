// Error metrics against the exact reference: the ULP distances (their home is
// normcheck/float_format.h, included here) and the normwise error.
#pragma once

#include <span>

#include "normcheck/float_format.h"

namespace normcheck {

// ||computed - exact||_2 / ||exact||_2 over finite entries; 0/0 gives 0,
// x/0 gives +inf. NaN in either side of an entry that is not NaN on both: +inf.
double normwise_error(std::span<const float> computed, std::span<const double> exact);

// The ULP error evaluate() reports (docs/semantics.md, "Metrics"): the ULP
// distance in the format of t, with a ULP never taken smaller than the
// format's spacing at `scale`, the row's scale of the output:
//   min(ulp_error(t, computed, exact), |computed - exact| / spacing(t, scale)).
// Where |exact| >= scale it is the ULP distance; below, where the exact value
// is tiny against the scale the output is computed at, it counts the error in
// ULPs of that scale. A scale that is not a positive number (0, NaN) leaves the
// ULP distance. For finite computed and exact values.
double scaled_ulp_error(DType t, float computed, double exact, double scale);

// Both ULP figures of one element, the ULP distance computed once:
// elementwise = ulp_error(t, computed, exact) and
// scaled = scaled_ulp_error(t, computed, exact, scale).
struct UlpFigures {
  double scaled = 0, elementwise = 0;
};
UlpFigures ulp_figures(DType t, float computed, double exact, double scale);

}  // namespace normcheck
