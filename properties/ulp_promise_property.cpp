// within_ulp_promise: a LayerNorm forward kernel that promises y within k ULP
// of the exact result (Kernel::ulp_promise, with gamma = 1 and beta = 0, for
// every finite row) keeps it. The tolerance is the promise itself: the ULP
// distance (float_format.h, ulp_error) of every element evaluate() judged
// against the exact reference, no slack. Not Evaluation::max_ulp, which takes
// a ULP no smaller than one of the row's scale (metrics.h): the promise is
// about each element's own ULP, near zero included.
#include <rapidcheck.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "judged.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool promises_ulps(const Kernel& kernel) {
  return kernel.op == Op::layernorm_fwd && kernel.ulp_promise > 0;
}

// Finite rows without gamma and beta: what the promise is about.
GenOptions unit_affine_options(const Kernel& kernel) {
  GenOptions opts = finite_options_for(kernel);
  opts.unit_gamma = true;
  return opts;
}

void within_ulp_promise(const Kernel& kernel, const Problem& problem) {
  const Evaluation e = judged(kernel, problem);
  double worst = 0;
  for (const MainElement& m : e.main_elements)  // +inf allowance: a row evaluate() does not check
    if (m.allowed != std::numeric_limits<double>::infinity())
      worst = std::max(worst, ulp_error(kernel.dtype, m.computed, m.exact));
  if (!(worst <= kernel.ulp_promise)) {
    std::ostringstream why;
    why << kernel.name << " promises " << kernel.ulp_promise << " ULP, max ULP error " << worst;
    RC_FAIL(why.str());
  }
}

}  // namespace

constinit const PropertyDef kWithinUlpPromise = {"within_ulp_promise", promises_ulps,
                                                 unit_affine_options, within_ulp_promise};

}  // namespace normcheck::props
