// Error metrics against the exact reference: the ULP distances (their home is
// normcheck/float_format.h, included here) and the normwise error.
#pragma once

#include <span>

#include "normcheck/float_format.h"

namespace normcheck {

// ||computed - exact||_2 / ||exact||_2 over finite entries; 0/0 gives 0,
// x/0 gives +inf. NaN in either side of an entry that is not NaN on both: +inf.
double normwise_error(std::span<const float> computed, std::span<const double> exact);

}  // namespace normcheck
