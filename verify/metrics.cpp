// The normwise error and the scaled ULP error (contracts in metrics.h).
#include "normcheck/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

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
