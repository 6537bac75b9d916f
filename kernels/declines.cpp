// declines(): the one gate between a kernel and a problem (kernel.h), and
// row_terms_reason() (row_terms.h), its test of one row.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "normcheck/kernel.h"
#include "normcheck/row_terms.h"

namespace normcheck {
namespace {

// Whether every value is finite, and the largest finite |value|: one pass
// with no branch per value (the inputs of every call are scanned). The
// maximum is taken on the bits of |value| (their order is the values').
struct FiniteScan {
  bool all_finite = true;
  float largest_finite = 0;
};
FiniteScan scan(std::span<const float> values) {
  uint32_t all = 1, largest = 0;
  for (const float v : values) {
    const uint32_t magnitude = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
    const uint32_t finite = magnitude < 0x7f800000u ? 1 : 0;
    all &= finite;
    largest = std::max(largest, finite ? magnitude : 0u);
  }
  return {all != 0, std::bit_cast<float>(largest)};
}

}  // namespace

double InputRange::limit(int64_t d) const {
  return sqrt_d_scaled ? max_abs_x / std::sqrt(static_cast<double>(std::max<int64_t>(d, 1))) : max_abs_x;
}

std::string row_terms_reason(const InputRange& domain, const RowScale& s) {
  if (!s.finite) return {};  // non-finite rows are the finite term's
  char reason[200];
  const double sigma = std::sqrt(s.scale_square);
  if (domain.min_sigma > 0 && !(sigma >= domain.min_sigma)) {
    std::snprintf(reason, sizeof reason, "sigma = %.3g is outside the kernel's declared domain %s", sigma,
                  domain_text({.min_sigma = domain.min_sigma}).c_str());
    return reason;
  }
  // NaN (an RMSNorm row, no mean subtracted) compares false: the term does not bind it.
  if (s.mean_over_sigma > domain.max_mean_over_sigma) {
    std::snprintf(reason, sizeof reason, "|mean|/sigma = %.3g is outside the kernel's declared domain %s",
                  s.mean_over_sigma, domain_text({.max_mean_over_sigma = domain.max_mean_over_sigma}).c_str());
    return reason;
  }
  return {};
}

std::string declines(const Kernel& kernel, const Request& request) {
  if (kernel.declines)
    if (std::string reason = kernel.declines(request.shape); !reason.empty()) return reason;

  const InputRange& domain = kernel.range;
  const int64_t d = request.shape.cols;
  // An empty problem (no rows or no columns) is a no-op with no d to hold to the range.
  const bool empty = request.shape.rows <= 0 || d <= 0;
  if (!empty && (d < domain.min_d || d > domain.max_d)) {
    const InputRange d_range{.min_d = domain.min_d, .max_d = domain.max_d};
    return "d = " + std::to_string(d) + " is outside the kernel's declared domain " + domain_text(d_range);
  }
  if (domain.min_eps > 0 && request.eps && !(*request.eps >= domain.min_eps)) {  // a NaN eps too
    char reason[160];
    std::snprintf(reason, sizeof reason, "eps = %.3g is outside the kernel's declared domain %s",
                  static_cast<double>(*request.eps), domain_text({.min_eps = domain.min_eps}).c_str());
    return reason;
  }

  const FiniteScan x_scan = scan(request.x);
  if (!domain.handles_nonfinite && (!x_scan.all_finite || !scan(request.dy).all_finite))
    return "a non-finite input; the kernel declares finite inputs only";
  const double limit = domain.limit(d);
  for (std::size_t i = 0; x_scan.largest_finite > limit && i < request.x.size(); ++i) {  // the first beyond it
    const float v = request.x[i];
    if (std::isfinite(v) && std::fabs(v) > limit) {
      const std::string declared =
          domain_text({.max_abs_x = domain.max_abs_x, .sqrt_d_scaled = domain.sqrt_d_scaled});
      char reason[200];
      if (domain.sqrt_d_scaled)
        std::snprintf(reason, sizeof reason, "|x| = %.3g is outside the kernel's declared domain %s (|x| <= %.3g here)",
                      static_cast<double>(std::fabs(v)), declared.c_str(), limit);
      else
        std::snprintf(reason, sizeof reason, "|x| = %.3g is outside the kernel's declared domain %s",
                      static_cast<double>(std::fabs(v)), declared.c_str());
      return reason;
    }
  }

  if (domain.min_abs_x > 0)
    for (const float v : request.x)
      if (v != 0 && std::fabs(v) < domain.min_abs_x) {  // a NaN compares false: the finite term's business
        char reason[200];
        std::snprintf(reason, sizeof reason, "|x| = %.3g is outside the kernel's declared domain %s (a nonzero x)",
                      static_cast<double>(std::fabs(v)), domain_text({.min_abs_x = domain.min_abs_x}).c_str());
        return reason;
      }
  for (std::size_t row = 0; row < request.row_scales.size(); ++row)
    if (std::string reason = row_terms_reason(domain, request.row_scales[row]); !reason.empty())
      return "row " + std::to_string(row) + ": " + reason;

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
