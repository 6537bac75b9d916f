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
    // Each is within its allowance of the same exact value E, or the infinity
    // of E's sign when |E| > FLT_MAX (evaluate() accepts that); so an infinity
    // can meet a finite v of its sign only if |v| + t reaches FLT_MAX.
    const auto overflowed_pair = [&](float inf, float v) {
      return std::isinf(inf) && std::isfinite(v) && std::signbit(inf) == std::signbit(v) &&
             std::fabs(static_cast<double>(v)) + t >= kFloatMax;
    };
    // A NaN tolerance comes from a non-finite input (an infinite scale): only
    // NaN/inf placement is checked there.
    const bool ok = (std::isnan(a) && std::isnan(b)) || (std::isinf(a) && a == b) ||
                    overflowed_pair(a, b) || overflowed_pair(b, a) ||
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
