// A-priori error bounds of the algorithms our kernels use, as functions of the
// row's condition (see Bound in kernel.h for what each coefficient bounds).
// The derivations are in the comments of kernels/bounds.cpp and in
// docs/accuracy.md; the building blocks the kernels' bounds share are
// internal (kernels/bound_blocks.h).
#pragma once

#include "normcheck/kernel.h"

namespace normcheck {

// Unit roundoff of float32: 2^-24.
inline constexpr double kUnitRoundoff = 0x1p-24;

// Unit roundoff of float64: 2^-53 (kernels that compute in double).
inline constexpr double kUnitRoundoff64 = 0x1p-53;

// Higham's gamma_n = n u / (1 - n u): the bound on the relative error of a
// product of n factors (1 + delta_i), |delta_i| <= u, u = unit_roundoff.
// Domain: n is a count of roundings; n <= 0 (none) gives 0, and once n u >= 1
// nothing is bounded: +inf.
double gamma_n(double n, double unit_roundoff = kUnitRoundoff);

// Higham and Mary's probabilistic gamma ("A new approach to probabilistic
// rounding error analysis", SIAM J. Sci. Comput. 41(5), 2019, Theorem 2.4):
// if the roundings delta_i of a product of n factors (1 + delta_i)^(+-1) are
// independent random variables of mean zero with |delta_i| <= u, then
//   |theta_n| <= gamma_tilde_n(lambda) = exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1
// with probability at least 1 - 2 exp(-lambda^2 (1 - u)^2 / 2). n <= 0 gives 0.
double gamma_tilde(double n, double lambda, double unit_roundoff = kUnitRoundoff);

// The lambda of the tight standard: each product it bounds fails with
// probability at most 2 exp(-50 (1 - 2^-24)^2) < 3.9e-22, so a row of d <=
// 2^24 values, whose bound rests on at most 4 d + 64 such products, fails
// with probability below 2.6e-14 (docs/accuracy.md, "The tight standard").
inline constexpr double kTightLambda = 10;

// min(gamma_n(n), gamma_tilde(n, lambda)) for lambda > 0 (each bounds the
// product; the worst case holds always, the probabilistic one under its
// model), gamma_n(n) for lambda = 0.
double gamma_model(double n, double lambda, double unit_roundoff = kUnitRoundoff);

// Half the smallest subnormal float: the absolute error of a product or
// quotient whose result underflows (sums and differences of floats are exact
// when their result is subnormal, so only products and quotients pay it).
inline constexpr double kUnderflowUnit = 0x1p-150;

// The bound a kernel of unknown algorithm is held to (plugins, adapters): what
// every correct two-pass float32 implementation with sequential summation meets.
BoundFn default_bound(Op op);

// The bound a plugin's kernel (and a user's kernel in the GoogleTest
// assertions, normcheck/gtest.h) is held to: default_bound(op) (what a careful
// two-pass float32 kernel meets). A forward kernel's outputs are then rounded
// to their formats by the admissible range of its spec (spec_policy.h); a
// backward kernel with bf16/f16 storage has the outputs' rounding to the
// 16-bit format added to the bound, as our 16-bit backward kernels do
// (simd::with_16bit_outputs, kernels/simd/hwy_bounds.h). kernels/plugin_bounds.cpp.
BoundFn plugin_bound(Op op, DType dtype);

// The tight standard of a bound (docs/accuracy.md, "The tight standard"): for
// the default bound of a forward norm (default_layernorm_fwd_bound,
// default_rmsnorm_fwd_bound), the same derivation with each gamma_n of a sum
// over the row gamma_model(n, kTightLambda): what a careful kernel meets on a
// realistic row (evaluate.h, realistic_row) save with a probability below
// 2.6e-14. Null for every other bound: a kernel with a bound of its own, or a
// tolerance asked for, is held to that alone.
BoundFn tight_bound(BoundFn bound);
Bound tight_layernorm_fwd_bound(const RowCondition& c);
Bound tight_rmsnorm_fwd_bound(const RowCondition& c);

// default_bound(op), for rows that must name it at compile time.
Bound default_layernorm_fwd_bound(const RowCondition& c);
Bound default_layernorm_bwd_bound(const RowCondition& c);
Bound default_rmsnorm_fwd_bound(const RowCondition& c);
Bound default_rmsnorm_bwd_bound(const RowCondition& c);
// plugin_bound(Op::layernorm_bwd, DType::bf16), for rows that must name it at
// compile time (a third party's bf16 backward).
Bound default_layernorm_bwd_bf16_bound(const RowCondition& c);
// A norm followed by a Linear, unfolded or folded (kernels/fold/norm_linear_bounds.cpp):
// either form over the default norm bound.
Bound default_layernorm_linear_fwd_bound(const RowCondition& c);
Bound default_rmsnorm_linear_fwd_bound(const RowCondition& c);

}  // namespace normcheck

namespace normcheck {

// Bounds of the algorithms shared by several kernels (each defined, with its
// derivation above it, in the file of the scalar kernel that introduces it).
Bound twopass_layernorm_fwd_bound(const RowCondition& c);  // kernels/scalar/layernorm_fwd_twopass.cpp
Bound twopass_layernorm_bwd_bound(const RowCondition& c);  // kernels/scalar/layernorm_bwd_twopass.cpp
Bound rmsnorm_fwd_bound(const RowCondition& c);            // kernels/scalar/rmsnorm_fwd.cpp
Bound rmsnorm_bwd_bound(const RowCondition& c);            // kernels/scalar/rmsnorm_bwd.cpp

// The forward algorithms' own bounds (the naive one is what the control would
// need; it declares the default bound instead, see its file).
Bound welford_layernorm_fwd_bound(const RowCondition& c);       // kernels/scalar/layernorm_fwd_welford.cpp
Bound pytorch_form_layernorm_fwd_bound(const RowCondition& c);  // kernels/scalar/layernorm_fwd_pytorch_form.cpp
Bound naive_onepass_layernorm_fwd_bound(const RowCondition& c); // kernels/scalar/layernorm_fwd_naive_onepass.cpp

}  // namespace normcheck
