// Bounds of the Highway kernels that more than one row of the table uses
// (each defined, with its derivation, in the file of the float32 kernel).
#pragma once

#include "normcheck/kernel.h"

namespace normcheck::simd {

Bound hwy_layernorm_fwd_bound(const RowCondition& c);  // layernorm_fwd_hwy.cpp
Bound accurate_layernorm_fwd_bound(const RowCondition& c);  // layernorm_fwd_accurate.cpp
Bound hwy_layernorm_bwd_bound(const RowCondition& c);  // layernorm_bwd_hwy.cpp
Bound hwy_rmsnorm_fwd_bound(const RowCondition& c);    // rmsnorm_fwd_hwy.cpp
// The 16-bit RMSNorm forward's float32 pass, before y's rounding to 16 bits
// (rmsnorm_fwd_hwy16.cpp).
Bound hwy_rmsnorm_fwd16_float_pass_bound(const RowCondition& c);
Bound hwy_rmsnorm_bwd_bound(const RowCondition& c);    // rmsnorm_bwd_hwy.cpp

// The centred mean m + c of the LayerNorm forward rows (layernorm_fwd.hwy,
// layernorm_fwd.accurate) is within e_sigma sigma of mu, and sigma <=
// min(sqrt(d) mean|x|, mean|x| / kappa) (sigma^2 <= mean x^2 <= max|x|
// mean|x|; sigma r <= 1): relative to mean|x| it is within
// e_m = e_sigma min(sqrt(d), 1/kappa).
double centred_mean_error(double e_sigma, const RowCondition& c);

// The accurate forward row's threshold (layernorm_fwd_accurate.cpp): elements
// whose computed |xhat| is below it, in a row of d elements summed on a target
// with `lanes` float64 lanes, are recomputed from the exact row sum.
double accurate_exact_below(int64_t d, int64_t lanes);

// A float32 backward kernel's bound after its outputs are rounded to the 16-bit
// storage format `storage` (bf16 or f16; normcheck/float_format.h gives its
// unit roundoff and half subnormal spacing): each output gains unit * |output|
// (|y| <= |gamma xhat| + |beta|; the dx scales bound |dx|) on top of the
// float32 error, which that rounding can grow by a factor (1 + unit); half
// the subnormal spacing (in underflow_abs) covers a subnormal result.
// dgamma/dbeta, mean, rstd and rrms stay float32 and keep their bounds. A
// result beyond the largest finite f16 rounds to inf: no relative bound;
// evaluate() admits that infinity where the exact result +- allowance leaves
// the f16 range (docs/semantics.md). The 16-bit inputs are exact in float32,
// so the float32 bound holds for the float32 result before the rounding.
// A forward kernel's bound stops before that rounding: y's rounding to its
// format is its spec's last stage, which the admissible range takes exactly
// (verify/spec_policy.cpp).
Bound with_16bit_outputs(Bound b, DType storage);

// The bound of a 16-bit row whose float32 row has bound kFloat32Bound.
template <Bound (*kFloat32Bound)(const RowCondition&), DType kStorage>
Bound bound_16bit(const RowCondition& c) {
  return with_16bit_outputs(kFloat32Bound(c), kStorage);
}

}  // namespace normcheck::simd
