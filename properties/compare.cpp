#include "compare.h"

#include <cmath>
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
  for (size_t i = 0; i < got.size(); ++i) {
    // +inf or NaN (an infinite coefficient times 0): the bound promises
    // nothing here, or the row is ill-posed (sigma^2 + eps = 0); evaluate()
    // does not check such elements either.
    if (!std::isfinite(tolerance[i])) continue;
    const float a = got[i], b = expected[i];
    const bool ok = (std::isnan(a) && std::isnan(b)) ||
                    (std::isinf(a) && a == b) ||
                    (std::isfinite(a) && std::isfinite(b) &&
                     std::fabs(static_cast<double>(a) - static_cast<double>(b)) <= tolerance[i]);
    if (!ok) {
      std::ostringstream os;
      os << what << ": element " << i << " is " << format_float_exact(a) << ", expected "
         << format_float_exact(b) << " within " << std::hexfloat << tolerance[i];
      RC_FAIL(os.str());
    }
  }
}

}  // namespace normcheck::props
