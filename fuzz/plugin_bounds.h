// The bound a plugin's kernel is held to: default_bound(op) (what a careful
// two-pass float32 kernel meets), and for bf16/f16 storage that bound with the
// outputs' rounding to the 16-bit format added, as for our 16-bit kernels
// (simd::with_16bit_outputs, kernels/simd/hwy_bounds.h).
#pragma once

#include "normcheck/kernel.h"

namespace normcheck::fuzz {

BoundFn plugin_bound(Op op, DType dtype);

}  // namespace normcheck::fuzz
