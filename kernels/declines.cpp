// declines(): the one gate between a kernel and a problem (kernel.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "normcheck/kernel.h"

namespace normcheck {

double InputRange::limit(int64_t d) const {
  return sqrt_d_scaled ? max_abs_x / std::sqrt(static_cast<double>(std::max<int64_t>(d, 1))) : max_abs_x;
}

std::string declines(const Kernel& kernel, const Request& request) {
  if (kernel.declines)
    if (std::string reason = kernel.declines(request.shape); !reason.empty()) return reason;

  const auto finite = [](float v) { return std::isfinite(v); };
  if (!kernel.range.handles_nonfinite &&
      (!std::all_of(request.x.begin(), request.x.end(), finite) ||
       !std::all_of(request.dy.begin(), request.dy.end(), finite)))
    return "a non-finite input; the kernel declares finite inputs only";
  const double limit = kernel.range.limit(request.shape.cols);
  for (const float v : request.x) {
    if (std::isfinite(v) && std::fabs(v) > limit) {
      char reason[160];
      std::snprintf(reason, sizeof reason, "|x| = %.3g is outside the kernel's declared range |x| <= %.3g",
                    static_cast<double>(std::fabs(v)), limit);
      return reason;
    }
  }

  if (kernel.declines_saved_statistic) {
    const char* name = kernel.op == Op::rmsnorm_bwd ? "rrms" : "rstd";
    for (std::size_t row = 0; row < request.saved_statistic.size(); ++row) {
      const float saved = request.saved_statistic[row];
      if (std::string reason = kernel.declines_saved_statistic(saved); !reason.empty()) {
        char where[96];
        std::snprintf(where, sizeof where, "row %zu (%s = %.3g): ", row, name, static_cast<double>(saved));
        return where + reason;
      }
    }
  }
  return {};
}

}  // namespace normcheck
