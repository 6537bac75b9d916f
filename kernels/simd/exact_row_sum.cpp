#include "simd/exact_row_sum.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace normcheck::simd {
namespace {

// A finite float as sign, integer mantissa and the position of its lowest bit
// in units of 2^-149: x = (-1)^negative * mantissa * 2^(position - 149).
struct FloatParts {
  bool negative;
  uint32_t mantissa;  // < 2^24
  int position;       // 0 .. 253
};

FloatParts parts_of(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int biased_exponent = static_cast<int>((bits >> 23) & 0xff);
  assert(biased_exponent != 0xff && "ExactRowSum takes finite floats only");
  FloatParts p{(bits >> 31) != 0, bits & 0x7fffffu, 0};
  if (biased_exponent != 0) {  // normal: implicit bit, 2^(e - 150) = 2^(e - 1 - 149)
    p.mantissa |= 0x800000u;
    p.position = biased_exponent - 1;
  }  // subnormal: mantissa * 2^-149
  return p;
}

}  // namespace

void ExactRowSum::propagate_carries(Limbs& limbs) {
  for (int k = 0; k + 1 < kLimbs; ++k) {
    const int64_t carry = limbs[k] >> 32;  // floor division by 2^32 (C++20 shifts are arithmetic)
    limbs[k] -= carry * (int64_t{1} << 32);
    limbs[k + 1] += carry;
  }
}

// Each add puts |v| < 2^24 * 2^31 = 2^55 into one limb; after a carry pass a
// limb lies in [0, 2^32), so 64 adds keep it below 2^32 + 2^61 < 2^63.
void ExactRowSum::add(float x) {
  const FloatParts p = parts_of(x);
  const int64_t v = static_cast<int64_t>(uint64_t{p.mantissa} << (p.position % 32));
  limbs_[p.position / 32] += p.negative ? -v : v;
  if (++adds_since_carry_ == 64) {
    propagate_carries(limbs_);
    adds_since_carry_ = 0;
  }
}

// count * x - S: the limbs of -S plus count * mantissa (< 2^64, shifted by
// < 32 bits: 4 limbs), carried so that only the top limb has a sign; a
// negative value is negated (and carried again) so every limb is a 32-bit
// digit. With t the top non-zero limb, H = n_t 2^64 + n_(t-1) 2^32 + n_(t-2)
// (>= 2^64, in units of limb t-2) and 0 <= L < 1 the limbs below:
//   fl(fl(n_t 2^64 + n_(t-1) 2^32) + n_(t-2)) = H (1 + th), |th| <= 2U + U^2,
// and L / (H + L) < 2^-64, so the result is within 2U + U^2 + 2^-64 < 2^-51.99
// (U = 2^-53) of count * x - S. The scaling by 2^(32 (t-2) - 149) is exact:
// the result stays between 2^-149 and 2^300, normal doubles.
double ExactRowSum::scaled_deviation(float x, int64_t count) const {
  assert(count >= 1 && count < (int64_t{1} << 40));
  Limbs n;
  for (int k = 0; k < kLimbs; ++k) n[k] = -limbs_[k];
  const FloatParts p = parts_of(x);
  const unsigned __int128 scaled = static_cast<unsigned __int128>(p.mantissa) *
                                   static_cast<uint64_t>(count) << (p.position % 32);
  for (int j = 0; j < 4; ++j) {
    const auto digit = static_cast<int64_t>(static_cast<uint64_t>(scaled >> (32 * j)) & 0xffffffffu);
    n[p.position / 32 + j] += p.negative ? -digit : digit;
  }
  propagate_carries(n);
  const bool negative = n[kLimbs - 1] < 0;
  if (negative) {
    for (int64_t& limb : n) limb = -limb;
    propagate_carries(n);
  }
  int top = kLimbs - 1;
  while (top >= 0 && n[top] == 0) --top;
  if (top < 0) return 0;
  const auto digit = [&](int k) { return k >= 0 ? static_cast<double>(n[k]) : 0.0; };
  const double head = (digit(top) * 0x1p64 + digit(top - 1) * 0x1p32) + digit(top - 2);
  const double magnitude = std::ldexp(head, 32 * (top - 2) - 149);
  return negative ? -magnitude : magnitude;
}

}  // namespace normcheck::simd
