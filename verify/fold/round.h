// Rounding a value computed in float64 (or as an unevaluated double-double
// hi + lo) to a storage format once: float32, bf16 or f16, to nearest, ties to
// even, with the format's subnormals and overflow to infinity.
#pragma once

#include <cstdint>

#include "normcheck/float_format.h"
#include "normcheck/kernel.h"

namespace normcheck::fold {

// The storage value nearest to hi + lo (|lo| <= ulp(hi)/2, a normalized
// double-double; lo = 0 for a plain double), returned as a double (every
// storage value is one). One rounding: hi is rounded by scaling to the
// format's quantum, and only when hi sits exactly on a midpoint of the format
// does lo's sign decide. NaN and infinities pass through.
double round_to_storage(DType t, double hi, double lo = 0);

// A storage value (as returned by round_to_storage) as the file's bits:
// float32 bits (uint32) or bf16/f16 bits (in the low 16 bits).
uint32_t storage_bits(DType t, double stored);
// The inverse: bits -> value (exact).
double value_from_bits(DType t, uint32_t bits);

// Bytes per element: 4 or 2.
constexpr int storage_bytes(DType t) { return float_format(t).storage_bytes(); }

}  // namespace normcheck::fold
