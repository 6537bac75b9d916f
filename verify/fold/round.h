// Rounding a value computed in float64 (or as an unevaluated double-double
// hi + lo) to a storage format once: float32, bf16 or f16, to nearest, ties to
// even, with the format's subnormals and overflow to infinity.
#pragma once

#include <cstdint>

#include "normcheck/kernel.h"

namespace normcheck::fold {

// The format's parameters: significand bits p (implicit bit included), the
// smallest normal exponent, and the largest finite value.
struct StorageFormat {
  int precision;   // 24 (f32), 8 (bf16), 11 (f16)
  int min_exp;     // -126, -126, -14: 2^min_exp is the smallest normal
  double largest;  // FLT_MAX, 0x1.fep127, 65504
  double unit_roundoff() const;      // u_s = 2^-p
  double underflow_half_gap() const; // eta_s = 2^(min_exp - p): half the subnormal spacing
};
StorageFormat storage_format(DType t);

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
int storage_bytes(DType t);

}  // namespace normcheck::fold
