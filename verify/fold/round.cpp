#include "round.h"

#include <bit>
#include <cmath>
#include <limits>

namespace normcheck::fold {

// With q the format's quantum at |hi| (2^(e - p + 1) in binade e, 2^(min_exp -
// p + 1) below the normal range), hi / q is exact (a power-of-two scaling of a
// double far inside double's range) and nearbyint rounds it to nearest even in
// the default rounding mode; times q is exact again. A result beyond the
// largest finite value is infinity: that is where round-to-nearest overflows
// (the first value past it is largest + half an ulp, a tie that goes to the
// even neighbour 2^(emax+1)).
double round_to_storage(DType t, double hi, double lo) {
  if (!std::isfinite(hi) || hi == 0) return hi;
  const FloatFormat f = float_format(t);
  const int e = std::max(std::ilogb(hi), f.min_exp);
  const double q = std::ldexp(1.0, e - f.precision + 1);
  const double scaled = hi / q;
  double n = std::nearbyint(scaled);
  if (lo != 0 && std::fabs(scaled - std::trunc(scaled)) == 0.5) {
    // hi is a midpoint: hi + lo is on lo's side of it.
    n = lo > 0 ? std::floor(scaled) + 1 : std::floor(scaled);
  }
  const double r = n * q;
  if (std::fabs(r) > f.largest_finite()) return std::copysign(std::numeric_limits<double>::infinity(), hi);
  return r;
}

uint32_t storage_bits(DType t, double stored) {
  const float f = static_cast<float>(stored);  // exact: stored is a storage value
  switch (t) {
    case DType::f32: break;
    case DType::bf16: return bf16_from_float(f);
    case DType::f16: return f16_from_float(f);
  }
  return std::bit_cast<uint32_t>(f);
}

double value_from_bits(DType t, uint32_t bits) {
  switch (t) {
    case DType::f32: break;
    case DType::bf16: return float_from_bf16(static_cast<uint16_t>(bits));
    case DType::f16: return float_from_f16(static_cast<uint16_t>(bits));
  }
  return std::bit_cast<float>(bits);
}

}  // namespace normcheck::fold
