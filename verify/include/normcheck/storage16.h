// The bf16 and f16 conversions and largest_finite(): their home is
// normcheck/float_format.h; this header forwards to it for the sources that
// still include it by this name.
#pragma once

#include "normcheck/float_format.h"
