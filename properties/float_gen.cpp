// Floats for the property suites: a shrinker toward simple values and the
// RapidCheck generator over draw_float (draw_float.cpp).
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <tuple>

#include "generators.h"

namespace normcheck::props {
namespace {

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
    offer(std::bit_cast<float>(bits & ~((1u << (23 - keep)) - 1u)));
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
