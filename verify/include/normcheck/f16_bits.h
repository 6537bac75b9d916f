// IEEE binary16 conversions in integer arithmetic, for compilers without
// _Float16 on the target (clang 14 on x86-64, which builds the libFuzzer
// target). Round to nearest, ties to even, subnormals and overflow to inf as
// the hardware conversion does; a NaN stays a NaN (quiet, its top payload bits
// kept). tests/verify/test_f16_bits.cpp compares both with _Float16 on every
// f16 value and on floats around every rounding boundary.
#pragma once

#include <bit>
#include <cstdint>

namespace normcheck::f16_bits {

inline uint16_t from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (or inf): inf
  const uint32_t e = abs >> 23;
  if (e < 113) {  // below 2^-14: an f16 subnormal or zero, in units of 2^-24
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25 (float subnormals included): 0
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;  // value = m 2^(e - 150)
    const uint32_t s = 126 - e;                       // value / 2^-24 = m / 2^s, s in 14..24
    uint32_t q = m >> s;
    const uint32_t rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t q = ((e - 112) << 10) | ((abs >> 13) & 0x3ffu);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;  // a carry moves into the exponent, as it should
  return static_cast<uint16_t>(sign | q);
}

inline float to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact: m < 2^10
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace normcheck::f16_bits
