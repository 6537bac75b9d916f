// Bounds of the Highway kernels that more than one row of the table uses
// (each defined, with its derivation, in the file of the float32 kernel).
#pragma once

#include "normcheck/kernel.h"

namespace normcheck::simd {

Bound hwy_layernorm_fwd_bound(const RowCondition& c);  // layernorm_fwd_hwy.cpp
Bound hwy_layernorm_bwd_bound(const RowCondition& c);  // layernorm_bwd_hwy.cpp
Bound hwy_rmsnorm_fwd_bound(const RowCondition& c);    // rmsnorm_fwd_hwy.cpp
Bound hwy_rmsnorm_bwd_bound(const RowCondition& c);    // rmsnorm_bwd_hwy.cpp

// The accurate forward row's threshold (layernorm_fwd_accurate.cpp): elements
// whose computed |xhat| is below it, in a row of d elements summed on a target
// with `lanes` float64 lanes, are recomputed from the exact row sum.
double accurate_exact_below(int64_t d, int64_t lanes);

// A float32 kernel's bound after its outputs are rounded to a 16-bit format
// (unit roundoff `unit`, subnormal spacing 2 * half_spacing): each output
// gains unit * |output| (|y| <= |gamma xhat| + |beta|; the dx scales bound
// |dx|) on top of the float32 error, which that rounding can grow by a factor
// (1 + unit); half_spacing (in underflow_abs) covers a subnormal result. dgamma/dbeta, mean and
// rstd stay float32.
//   bf16: unit 2^-8,  half_spacing 2^-134;  f16: unit 2^-11, half_spacing 2^-25.
Bound with_16bit_outputs(Bound b, double unit, double half_spacing);

}  // namespace normcheck::simd
