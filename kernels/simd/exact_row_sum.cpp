#include "simd/exact_row_sum.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace normcheck::simd {
namespace {

// A double that is an integer multiple of 2^-149, as sign, integer mantissa
// and the position of its lowest bit in units of 2^-149:
// v = (-1)^negative * mantissa * 2^(position - 149), mantissa odd (or 0).
struct Parts {
  bool negative;
  uint64_t mantissa;  // < 2^53
  int position;       // >= 0
};

Parts parts_of(double v) {
  assert(std::isfinite(v) && "ExactRowSum takes finite values only");
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ff);
  Parts p{(bits >> 63) != 0, bits & ((uint64_t{1} << 52) - 1), 0};
  if (p.mantissa == 0 && biased_exponent == 0) return p;  // +-0
  int exponent = biased_exponent - 1075;  // of the mantissa's lowest bit
  if (biased_exponent != 0) p.mantissa |= uint64_t{1} << 52;
  else exponent = -1074;
  const int zeros = std::countr_zero(p.mantissa);
  p.mantissa >>= zeros;
  p.position = exponent + zeros + 149;
  assert(p.position >= 0 && "ExactRowSum takes multiples of 2^-149 only");
  return p;
}

// limbs += (-1)^negative * magnitude * 2^position (magnitude < 2^64,
// position / 32 + 3 < kLimbs): the shifted magnitude (< 2^95) goes into four
// limbs as 32-bit digits.
template <class Limbs>
void add_shifted(Limbs& limbs, bool negative, uint64_t magnitude, int position) {
  assert(static_cast<size_t>(position / 32 + 3) < limbs.size());
  const unsigned __int128 shifted = static_cast<unsigned __int128>(magnitude) << (position % 32);
  for (int j = 0; j < 4; ++j) {
    const auto digit = static_cast<int64_t>(static_cast<uint64_t>(shifted >> (32 * j)) & 0xffffffffu);
    limbs[static_cast<size_t>(position / 32 + j)] += negative ? -digit : digit;
  }
}

}  // namespace

void ExactRowSum::propagate_carries(Limbs& limbs) {
  for (int k = 0; k + 1 < kLimbs; ++k) {
    const int64_t carry = limbs[k] >> 32;  // floor division by 2^32 (C++20 shifts are arithmetic)
    limbs[k] -= carry * (int64_t{1} << 32);
    limbs[k + 1] += carry;
  }
}

// Each add puts digits below 2^32 into four limbs; after a carry pass a limb
// lies in [0, 2^32), so 64 adds keep it below 65 * 2^32 < 2^63.
void ExactRowSum::add(double v) {
  const Parts p = parts_of(v);
  if (p.mantissa == 0) return;
  add_shifted(limbs_, p.negative, p.mantissa, p.position);
  if (++adds_since_carry_ == 64) {
    propagate_carries(limbs_);
    adds_since_carry_ = 0;
  }
}

// count * x - S: the limbs of -S plus count * mantissa (< 2^64), carried so that only the top limb has a sign; a
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
  const Parts p = parts_of(x);  // a float: mantissa < 2^24, so count * mantissa < 2^64
  add_shifted(n, p.negative, p.mantissa * static_cast<uint64_t>(count), p.position);
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
