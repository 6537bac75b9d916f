// Error metrics against the exact reference: the ULP distances (their home is
// normcheck/float_format.h, included here) and the normwise error.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

#include "normcheck/float_format.h"

namespace normcheck {

// ||computed - exact||_2 / ||exact||_2 over finite entries; 0/0 gives 0,
// x/0 gives +inf. NaN in either side of an entry that is not NaN on both: +inf.
double normwise_error(std::span<const float> computed, std::span<const double> exact);

// Both ULP figures of one element, the ULP distance computed once:
// elementwise = ulp_error(t, computed, exact) and
// scaled = scaled_ulp_error(t, computed, exact, scale).
// Always inline: it runs for every element checked, and a call returning the
// pair through memory cost more than its arithmetic (a store-forwarding stall).
struct UlpFigures {
  double scaled = 0, elementwise = 0;
};
[[gnu::always_inline]] inline UlpFigures ulp_figures(DType t, float computed, double exact, double scale) {
  const double ulps = ulp_error(t, computed, exact);
  if (!(scale > 0)) return {ulps, ulps};
  const double in_scale_ulps = std::fabs(static_cast<double>(computed) - exact) *
                               float_format_detail::inverse_power_of_two(spacing(t, scale));
  return {std::min(ulps, in_scale_ulps), ulps};
}

// The ULP error evaluate() reports (docs/semantics.md, "Metrics"): the ULP
// distance in the format of t, with a ULP never taken smaller than the
// format's spacing at `scale`, the row's scale of the output:
//   min(ulp_error(t, computed, exact), |computed - exact| / spacing(t, scale)).
// Where |exact| >= scale it is the ULP distance; below, where the exact value
// is tiny against the scale the output is computed at, it counts the error in
// ULPs of that scale. A scale that is not a positive number (0, NaN) leaves the
// ULP distance. For finite computed and exact values.
inline double scaled_ulp_error(DType t, float computed, double exact, double scale) {
  return ulp_figures(t, computed, exact, scale).scaled;
}

}  // namespace normcheck
