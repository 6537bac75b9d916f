// Error metrics against the exact reference.
#pragma once

#include <cstdint>
#include <span>

namespace normcheck {

// Position of a float on the monotone integer line of floats: consecutive
// floats are consecutive integers, +0 and -0 are both 0, +-inf sit one past
// +-FLT_MAX. NaN has no position (callers treat it separately).
int64_t float_ordinal(float f);

// Distance in ULP between a computed float and the exact (unrounded) value,
// measured on that same line: the exact value's position is fractional.
//   NaN vs NaN = 0; NaN vs number (either way) = +inf; inf vs the same inf = 0;
//   an exact value beyond the float range sits past FLT_MAX at the spacing of
//   the top binade, so overflow to inf costs what the distance says.
double ulp_error(float computed, double exact);

// ULP distance between two floats (integer on the same line; NaN rules as above).
double ulp_distance(float a, float b);

// ||computed - exact||_2 / ||exact||_2 over finite entries; 0/0 gives 0,
// x/0 gives +inf. NaN in either side of an entry that is not NaN on both: +inf.
double normwise_error(std::span<const float> computed, std::span<const double> exact);

}  // namespace normcheck
