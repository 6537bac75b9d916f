// A-priori error bounds of the algorithms our kernels use, as functions of the
// row's condition (see Bound in kernel.h for what each coefficient bounds).
// The derivations are in the comments of kernels/bounds.cpp and in
// docs/accuracy.md.
#pragma once

#include "normcheck/kernel.h"

namespace normcheck {

// Unit roundoff of float32: 2^-24.
inline constexpr double kUnitRoundoff = 0x1p-24;

// Higham's gamma_n = n u / (1 - n u): the bound on the relative error of a
// product of n factors (1 + delta_i), |delta_i| <= u. +inf once n u >= 1.
double gamma_n(double n);

// The bound a kernel of unknown algorithm is held to (plugins, adapters): what
// every correct two-pass float32 implementation with sequential summation meets.
BoundFn default_bound(Op op);

}  // namespace normcheck

namespace normcheck {

// Bounds of the algorithms shared by several kernels (each defined, with its
// derivation above it, in the file of the scalar kernel that introduces it).
Bound twopass_layernorm_fwd_bound(const RowCondition& c);  // kernels/scalar/layernorm_fwd_twopass.cpp
Bound twopass_layernorm_bwd_bound(const RowCondition& c);  // kernels/scalar/layernorm_bwd_twopass.cpp
Bound rmsnorm_fwd_bound(const RowCondition& c);            // kernels/scalar/rmsnorm_fwd.cpp
Bound rmsnorm_bwd_bound(const RowCondition& c);            // kernels/scalar/rmsnorm_bwd.cpp

}  // namespace normcheck
