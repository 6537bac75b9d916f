// normalized_moments: with eps = 0 and no affine, the exact xhat of a row with
// sigma > 0 has sum_i xhat_i = 0 and sum_i xhat_i^2 = d exactly. The kernel's
// y_i = xhat_i + e_i with |e_i| <= A_i (its bound's allowance), so
//   |mean(y)|       <= mean(A)
//   |mean(y^2) - 1| <= (2 sum |xhat_i| A_i + sum A_i^2) / d.
// The sums are taken in long double (64-bit significand): summing d terms
// adds at most d 2^-63 of the sum of their magnitudes (Higham's gamma_{d-1}
// with u = 2^-64, doubled for the rounding of the squares), which the
// tolerance includes. mean(y^2) is the variance of y about the exact mean 0.
#include <cmath>
#include <sstream>

#include <rapidcheck.h>

#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool applies(const Kernel& kernel) { return invariant_applies(kernel) && kernel.op == Op::layernorm_fwd; }

GenOptions standardized(const Kernel& kernel) {
  GenOptions opts = finite_options_for(kernel);
  opts.eps = 0.0f;
  opts.affine = false;
  opts.nonconstant = true;
  return opts;
}

void normalized_moments(const Kernel& kernel, const Problem& p) {
  const auto d = static_cast<long double>(p.cols);
  for_each_promised_row(judged(kernel, p), p.rows, p.cols, [d](int64_t r, std::span<const MainElement> row) {
    long double sum = 0, sum_abs = 0, squares = 0, allowed_mean = 0, allowed_squares = 0;
    for (const MainElement& e : row) {
      const long double v = e.computed;
      sum += v;
      sum_abs += std::fabs(v);
      squares += v * v;
      allowed_mean += e.allowed;
      allowed_squares += 2 * std::fabs(e.xhat) * e.allowed + static_cast<long double>(e.allowed) * e.allowed;
    }
    const long double rounding = d * 0x1p-63L;
    const long double mean_error = std::fabs(sum / d);
    const long double mean_tolerance = allowed_mean / d + rounding * sum_abs / d;
    const long double square_error = std::fabs(squares / d - 1);
    const long double square_tolerance = allowed_squares / d + 2 * rounding * squares / d;
    if (!(mean_error <= mean_tolerance) || !(square_error <= square_tolerance)) {
      std::ostringstream os;
      os << "row " << r << ": |mean(y)| = " << static_cast<double>(mean_error) << " (allowed "
         << static_cast<double>(mean_tolerance) << "), |mean(y^2) - 1| = " << static_cast<double>(square_error)
         << " (allowed " << static_cast<double>(square_tolerance) << ")";
      RC_FAIL(os.str());
    }
  });
}

}  // namespace

constinit const PropertyDef kNormalizedMoments = {"normalized_moments", applies, standardized,
                                                  normalized_moments};

}  // namespace normcheck::props
