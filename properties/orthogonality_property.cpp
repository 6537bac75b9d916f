// gradient_orthogonality: the exact LayerNorm gradient
//   dx = r (g - mean(g) - xhat mean(g xhat)),  g = gamma dy,
// satisfies sum_i dx_i = 0 (LN ignores a shift of x) for every eps, and
// sum_i dx_i xhat_i = r eps r^2 sum_i g_i xhat_i, which is 0 for eps = 0 (LN
// ignores a scaling of x). That holds for any gamma, so gamma is generated
// freely (gamma == 1 included). The kernel's dx_i is within A_i (its bound's
// allowance) of the exact value, so
//   |sum dx^_i|        <= sum A_i
//   |sum dx^_i xhat_i| <= sum A_i |xhat_i|          (eps = 0)
// plus the long double summation error d 2^-63 sum |terms|, and 2^-52 sum
// |dx^_i xhat_i| for xhat being the exact value rounded to double.
#include <cmath>
#include <sstream>

#include <rapidcheck.h>

#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool applies(const Kernel& kernel) { return invariant_applies(kernel) && kernel.op == Op::layernorm_bwd; }

GenOptions nonconstant_rows(const Kernel& kernel) {
  GenOptions opts = finite_options_for(kernel);
  opts.nonconstant = true;
  return opts;
}

void gradient_orthogonality(const Kernel& kernel, const Problem& p) {
  const auto d = static_cast<long double>(p.cols);
  for_each_promised_row(judged(kernel, p), p.rows, p.cols, [d, &p](int64_t r, std::span<const MainElement> row) {
    long double sum = 0, sum_abs = 0, projection = 0, projection_abs = 0, allowed_sum = 0, allowed_projection = 0;
    for (const MainElement& e : row) {
      sum += e.computed;
      sum_abs += std::fabs(e.computed);
      projection += static_cast<long double>(e.computed) * e.xhat;
      projection_abs += std::fabs(static_cast<long double>(e.computed) * e.xhat);
      allowed_sum += e.allowed;
      allowed_projection += e.allowed * std::fabs(e.xhat);
    }
    const long double rounding = d * 0x1p-63L;
    const long double sum_tolerance = allowed_sum + rounding * sum_abs;
    const long double projection_tolerance = allowed_projection + (rounding + 0x1p-52L) * projection_abs;
    std::ostringstream os;
    if (!(std::fabs(sum) <= sum_tolerance))
      os << "row " << r << ": |sum dx| = " << static_cast<double>(std::fabs(sum)) << " > allowed "
         << static_cast<double>(sum_tolerance);
    else if (p.eps == 0 && !(std::fabs(projection) <= projection_tolerance))
      os << "row " << r << ": |sum dx xhat| = " << static_cast<double>(std::fabs(projection))
         << " > allowed " << static_cast<double>(projection_tolerance) << " (eps = 0)";
    if (!os.str().empty()) RC_FAIL(os.str());
  });
}

}  // namespace

constinit const PropertyDef kGradientOrthogonality = {"gradient_orthogonality", applies, nonconstant_rows,
                                                      gradient_orthogonality};

}  // namespace normcheck::props
