// ULP and normwise error metrics (contract in metrics.h).
#include "normcheck/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kFltMax = std::numeric_limits<float>::max();
// Spacing of the top float binade [2^127, 2^128): the ULP of FLT_MAX.
constexpr double kTopUlp = 0x1p104;

// The float after a non-negative finite float f (+1 on its bits: they
// increase with the value, +0 being 0) and the one before a positive f.
float next_up(float f) { return std::bit_cast<float>(std::bit_cast<uint32_t>(f) + 1); }
float next_down(float f) { return std::bit_cast<float>(std::bit_cast<uint32_t>(f) - 1); }

// The largest float <= a (a >= 0, a <= FLT_MAX) and the gap to the next float.
void float_below(double a, float& below, double& gap) {
  below = static_cast<float>(a);  // nearest (+0 for a = 0); step down if it rounded up (then below > 0)
  if (static_cast<double>(below) > a) below = next_down(below);
  gap = below == kFltMax ? kTopUlp : static_cast<double>(next_up(below)) - below;
}

}  // namespace

// Sign-magnitude bits mapped to a signed integer: the magnitude bits of a
// non-negative float already increase with its value (inf = 0x7f800000 sits
// right after FLT_MAX = 0x7f7fffff), and negatives mirror them, so -0 and +0
// both land on 0.
int64_t float_ordinal(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const int64_t magnitude = bits & 0x7fffffffu;
  return (bits >> 31) ? -magnitude : magnitude;
}

double ulp_error(float computed, double exact) {
  if (std::isnan(computed) || std::isnan(exact))
    return std::isnan(computed) && std::isnan(exact) ? 0 : kInf;
  if (std::isinf(exact))  // a true infinity (not an overflowed value): only itself is close
    return static_cast<double>(computed) == exact ? 0 : kInf;

  // The exact value's position, n + frac on the ordinal line of |exact|; the
  // distance is taken as an integer part plus a fraction so that no rounding
  // of ordinals near 2^31 eats the fraction.
  const double a = std::fabs(exact);
  int64_t n;
  double frac;
  if (a >= kFltMax) {
    n = float_ordinal(kFltMax);
    frac = (a - kFltMax) / kTopUlp;  // past FLT_MAX at the top binade's spacing
  } else {
    float below;
    double gap;
    float_below(a, below, gap);
    n = float_ordinal(below);
    frac = (a - below) / gap;  // a - below is exact: both lie within one float gap
  }
  const int64_t sign = std::signbit(exact) ? -1 : 1;
  const int64_t whole = float_ordinal(computed) - sign * n;
  return std::fabs(static_cast<double>(whole) - static_cast<double>(sign) * frac);
}

double ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : kInf;
  return static_cast<double>(std::llabs(float_ordinal(a) - float_ordinal(b)));
}

// ||c - e||_2 / ||e||_2 with both norms scaled by their largest entry, so
// neither squares overflow (exact values reach ~2^400 in dx) nor underflow.
double normwise_error(std::span<const float> computed, std::span<const double> exact) {
  if (computed.size() != exact.size())
    throw std::invalid_argument("normwise_error: computed and exact differ in length");
  double max_diff = 0, max_exact = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double c = computed[i], e = exact[i];
    if (std::isnan(c) && std::isnan(e)) continue;
    if (!std::isfinite(c) || !std::isfinite(e)) {
      if (c == e) continue;  // the same infinity
      return kInf;
    }
    max_diff = std::max(max_diff, std::fabs(c - e));
    max_exact = std::max(max_exact, std::fabs(e));
  }
  if (max_diff == 0) return 0;  // includes 0/0
  if (max_exact == 0) return kInf;
  double sum_diff = 0, sum_exact = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double c = computed[i], e = exact[i];
    if (!std::isfinite(c) || !std::isfinite(e)) continue;
    const double dd = (c - e) / max_diff, de = e / max_exact;
    sum_diff += dd * dd;
    sum_exact += de * de;
  }
  return (max_diff / max_exact) * std::sqrt(sum_diff / sum_exact);
}

}  // namespace normcheck
