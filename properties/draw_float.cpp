// Adversarial floats without RapidCheck: bit-pattern-uniform draws and
// weighted specials (the property generators and `normcheck report` share them).
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

#include "row_families.h"

namespace normcheck::props {
namespace {

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

// The largest float whose magnitude is <= max_abs.
float largest_within(double max_abs) {
  if (max_abs >= FLT_MAX) return FLT_MAX;
  float f = static_cast<float>(max_abs);
  if (static_cast<double>(f) > max_abs) f = std::nextafter(f, 0.0f);
  return f;
}

float clamp_magnitude(float v, double max_abs) {
  if (std::isfinite(v) && std::fabs(static_cast<double>(v)) > max_abs)
    return std::copysign(largest_within(max_abs), v);
  return v;
}

float draw_special(Rng& rng, const FloatLimits& limits) {
  std::uniform_int_distribution<int> kind(0, limits.nonfinite ? 14 : 10);
  std::uniform_int_distribution<int> power(-149, 127);
  const float sign = (rng() & 1) ? -1.0f : 1.0f;
  switch (kind(rng)) {
    case 0: return sign * 0.0f;
    case 1: return sign * std::numeric_limits<float>::denorm_min();
    case 2: return sign * std::nextafter(FLT_MIN, 0.0f);  // largest subnormal
    case 3: return sign * from_bits(1 + static_cast<uint32_t>(rng() % 0x7fffff));  // a subnormal
    case 4: return sign * FLT_MIN;
    case 5: return sign * FLT_MAX;  // clamped below to the range
    case 6: return sign * std::ldexp(1.0f, power(rng));
    case 7: return sign * std::nextafter(std::ldexp(1.0f, power(rng)), 0.0f);
    case 8: return sign * std::nextafter(std::ldexp(1.0f, power(rng)), INFINITY);
    case 9: return sign * 1.0f;
    case 10: return sign * std::nextafter(1.0f, (rng() & 1) ? 0.0f : 2.0f);
    case 11: return INFINITY;
    case 12: return -INFINITY;
    case 13: return std::numeric_limits<float>::quiet_NaN();
    default:  // a NaN with a random payload and sign
      return from_bits(0x7fc00000u | static_cast<uint32_t>(rng() & 0x803fffffu));
  }
}

}  // namespace

double max_abs_x(const InputRange& range, int64_t d) {
  return std::min<double>(range.limit(d), FLT_MAX);
}

float draw_float(Rng& rng, const FloatLimits& limits) {
  if (rng() & 1) return clamp_magnitude(draw_special(rng, limits), limits.max_abs);
  // Uniform over the bit patterns of magnitude <= max_abs (floats are ordered
  // like their bit patterns), plus the non-finite patterns when allowed.
  const uint32_t top = limits.nonfinite && limits.max_abs >= FLT_MAX
                           ? 0x7fffffffu
                           : std::bit_cast<uint32_t>(largest_within(limits.max_abs));
  const uint32_t magnitude = static_cast<uint32_t>(rng() % (static_cast<uint64_t>(top) + 1));
  return from_bits(magnitude | ((rng() & 1) ? 0x80000000u : 0u));
}

}  // namespace normcheck::props
