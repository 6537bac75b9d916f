// bf16 and f16 storage: the bit conversions to and from float32, and the
// largest finite value of each storage format. The one home of these
// conversions (evaluate.cpp, the folding library and their tests use it).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "normcheck/f16_bits.h"
#include "normcheck/kernel.h"

namespace normcheck {

// float32 -> bf16 bits, rounded to nearest even (bf16 keeps float's exponent
// range, so this is one rounding, overflow to inf included); NaN stays a quiet NaN.
inline uint16_t bf16_from_float(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
  const uint32_t round_to_nearest_even = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + round_to_nearest_even) >> 16);
}

// bf16 bits -> float32: exact.
inline float float_from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

#if defined(__FLT16_MAX__)  // the compiler has _Float16 on this target
// float32 -> f16 bits, rounded to nearest even with subnormals and overflow to inf.
inline uint16_t f16_from_float(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

// f16 bits -> float32: exact.
inline float float_from_f16(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
#else  // the same conversions in integer arithmetic (f16_bits.h)
inline uint16_t f16_from_float(float f) { return f16_bits::from_float(f); }
inline float float_from_f16(uint16_t h) { return f16_bits::to_float(h); }
#endif

inline uint16_t to_16(DType t, float f) { return t == DType::bf16 ? bf16_from_float(f) : f16_from_float(f); }

inline float from_16(DType t, uint16_t h) { return t == DType::bf16 ? float_from_bf16(h) : float_from_f16(h); }

// The largest finite value of the format; beyond it a value rounds to inf.
inline double largest_finite(DType t) {
  switch (t) {
    case DType::f32: break;
    case DType::bf16: return 0x1.fep127;
    case DType::f16: return 65504.0;
  }
  return std::numeric_limits<float>::max();
}

}  // namespace normcheck
