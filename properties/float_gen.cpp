// Floats for the property suites: bit-pattern-uniform draws, weighted
// specials, and a shrinker toward simple values.
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <tuple>

#include "generators.h"

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

// Lexicographic simplicity: finite before non-finite, 0 first, then fewer
// significant bits, then an exponent closer to 0 (1.0 has exponent 0), then
// positive before negative. Every shrink candidate is strictly simpler, so
// shrinking terminates.
std::tuple<bool, bool, int, int, bool> complexity(float v) {
  if (!std::isfinite(v)) return {true, true, 0, 0, false};
  if (v == 0.0f) return {false, false, 0, 0, false};
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  const uint32_t exponent_field = (bits >> 23) & 0xff;
  const uint32_t significand = (bits & 0x7fffff) | (exponent_field ? 0x800000u : 0u);
  const int significant_bits = std::bit_width(significand) - std::countr_zero(significand);
  return {false, true, significant_bits, std::abs(std::ilogb(v)), std::signbit(v)};
}

}  // namespace

double max_abs_x(const InputRange& range, int64_t d) {
  const double limit = range.sqrt_d_scaled
                           ? range.max_abs_x / std::sqrt(static_cast<double>(std::max<int64_t>(d, 1)))
                           : range.max_abs_x;
  return std::min<double>(limit, FLT_MAX);
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

rc::Seq<float> shrink_float(float v) {
  std::vector<float> candidates;
  const float reach = std::isfinite(v) ? std::max(std::fabs(v), 1.0f) : 1.0f;
  const auto offer = [&](float c) {
    if (complexity(c) < complexity(v) && std::fabs(c) <= reach && std::isfinite(c))
      candidates.push_back(c);
  };
  offer(0.0f);
  if (!std::isfinite(v)) {
    offer(1.0f);
    return rc::seq::fromContainer(std::move(candidates));
  }
  offer(-v);
  offer(std::copysign(1.0f, v));
  offer(std::trunc(v));
  // Keep only the top k bits of the 23-bit mantissa field.
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  for (int keep : {0, 1, 2, 4, 8, 12, 16, 20})
    offer(from_bits(bits & ~((1u << (23 - keep)) - 1u)));
  // Same mantissa, exponent halfway to 0.
  int exponent = 0;
  const float fraction = std::frexp(v, &exponent);  // v = fraction * 2^exponent
  const int unbiased = exponent - 1;                 // v = (2 fraction) * 2^unbiased
  offer(std::ldexp(2.0f * fraction, unbiased / 2));
  return rc::seq::fromContainer(std::move(candidates));
}

rc::Gen<float> gen_float(FloatLimits limits) {
  return rc::Gen<float>([limits](const rc::Random& random, int) {
    rc::Random local = random;
    Rng rng(local.next());
    return rc::shrinkable::shrinkRecur(draw_float(rng, limits), &shrink_float);
  });
}

}  // namespace normcheck::props
