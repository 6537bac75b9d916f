#include "nonfinite.h"

#include <algorithm>
#include <cmath>

namespace normcheck {

// The order none < both < {row_nan, ieee} < mixed < neither, where row_nan and
// ieee together make mixed: the verdict of a set of elements is the least one
// that every element's verdict is at most.
NonFiniteConvention combine(NonFiniteConvention a, NonFiniteConvention b) {
  using C = NonFiniteConvention;
  if (a == C::none || a == C::both) return b == C::none ? a : b;
  if (b == C::none || b == C::both || a == b) return a;
  if (a == C::neither || b == C::neither) return C::neither;
  return C::mixed;  // row_nan with ieee, or either with mixed
}

std::string_view to_string(NonFiniteConvention c) {
  switch (c) {
    case NonFiniteConvention::none: return "none";
    case NonFiniteConvention::both: return "both";
    case NonFiniteConvention::row_nan: return "row-NaN";
    case NonFiniteConvention::ieee: return "IEEE";
    case NonFiniteConvention::mixed: return "mixed";
    case NonFiniteConvention::neither: break;
  }
  return "neither";
}

namespace evaluation {

bool only_infinities(std::span<const float> row) {
  const bool any_nan = std::any_of(row.begin(), row.end(), [](float v) { return std::isnan(v); });
  const bool any_inf = std::any_of(row.begin(), row.end(), [](float v) { return std::isinf(v); });
  return any_inf && !any_nan;
}

std::optional<double> ieee_rrms(bool infinities_only) {
  if (infinities_only) return 0.0;
  return std::nullopt;
}

std::optional<double> ieee_rmsnorm_y(bool infinities_only, float x_j, double gamma_j) {
  if (infinities_only && std::isfinite(x_j) && std::isfinite(gamma_j)) return 0.0;
  return std::nullopt;
}

NonFiniteConvention convention_of(float computed, std::optional<double> ieee) {
  using C = NonFiniteConvention;
  if (std::isnan(computed)) return ieee ? C::row_nan : C::both;
  if (std::isinf(computed)) return ieee ? C::mixed : C::ieee;
  return ieee && static_cast<double>(computed) == *ieee ? C::ieee : C::neither;
}

bool admitted(NonFinite rule, NonFiniteConvention element) {
  if (rule == NonFinite::row_nan_only)
    return element == NonFiniteConvention::both || element == NonFiniteConvention::row_nan;
  return element != NonFiniteConvention::neither;
}

}  // namespace evaluation
}  // namespace normcheck
