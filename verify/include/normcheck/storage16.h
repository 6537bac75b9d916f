// The bf16 and f16 conversions and largest_finite(): their home is
// normcheck/float_format.h; this header only includes it.
#pragma once

#include "normcheck/float_format.h"
