// The bound a plugin's kernel is held to: default_bound(op) (what a careful
// two-pass float32 kernel meets). A forward kernel's outputs are then rounded
// to their formats by the admissible range of its spec (spec_policy.h); a
// backward kernel with bf16/f16 storage has the outputs' rounding to the
// 16-bit format added to the bound, as our 16-bit backward kernels do
// (simd::with_16bit_outputs, kernels/simd/hwy_bounds.h).
#pragma once

#include "normcheck/kernel.h"

namespace normcheck::fuzz {

BoundFn plugin_bound(Op op, DType dtype);

}  // namespace normcheck::fuzz
