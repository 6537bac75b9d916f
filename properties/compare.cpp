#include "compare.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <rapidcheck.h>

#include "normcheck/row_file.h"

namespace normcheck::props {

void require_pass(const Evaluation& e) {
  if (e.pass) return;
  std::ostringstream os;
  os << e.kernel << ": max error/bound " << e.max_error_over_bound << ", max ulp " << e.max_ulp;
  if (e.nonfinite_mismatch) os << ", NaN/inf where the reference is finite (or the reverse)";
  if (e.out_of_bounds_write) os << ", wrote outside its output";
  if (e.unwritten_output) os << ", left an output unwritten";
  if (e.wrote_input) os << ", wrote into an input";
  os << "; worst: " << e.worst.output << "[row " << e.worst.row << ", col " << e.worst.col
     << "] computed " << format_float_exact(e.worst.computed) << " exact " << std::hexfloat
     << e.worst.exact << " allowed " << e.worst.allowed;
  RC_FAIL(os.str());
}

void require_within(std::string_view what, const std::vector<float>& got,
                    const std::vector<float>& expected, const std::vector<double>& tolerance) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  for (size_t i = 0; i < got.size(); ++i) {
    // +inf: the bound promises nothing here (a +inf coefficient, or a row
    // evaluate() does not check); evaluate() checks nothing of such an element.
    if (tolerance[i] == std::numeric_limits<double>::infinity()) continue;
    const float a = got[i], b = expected[i];
    const double t = tolerance[i];
    // Each is within its allowance of the same exact value E, or an infinity
    // on a side where E +- its allowance leaves the float range (evaluate()
    // admits that: bounds are derived without overflow). With only the sum t
    // of the two allowances: +inf meets a finite v when v + t > FLT_MAX, -inf
    // when v - t < -FLT_MAX, and the other infinity when t > 2 FLT_MAX.
    const auto meets_infinity = [&](float inf, float v) {
      if (std::isinf(v)) return v == inf || t > 2 * kFloatMax;
      return inf > 0 ? v + t > kFloatMax : v - t < -kFloatMax;
    };
    // A NaN tolerance comes from a non-finite input (an infinite scale): only
    // NaN/inf placement is checked there.
    const bool ok = (std::isnan(a) && std::isnan(b)) ||
                    (std::isinf(a) && !std::isnan(b) && !std::isnan(t) && meets_infinity(a, b)) ||
                    (std::isinf(b) && std::isfinite(a) && !std::isnan(t) && meets_infinity(b, a)) ||
                    (std::isfinite(a) && std::isfinite(b) &&
                     (std::isnan(t) || std::fabs(static_cast<double>(a) - static_cast<double>(b)) <= t));
    if (!ok) {
      std::ostringstream os;
      os << what << ": element " << i << " is " << format_float_exact(a) << ", expected "
         << format_float_exact(b) << " within " << std::hexfloat << t;
      RC_FAIL(os.str());
    }
  }
}

}  // namespace normcheck::props
