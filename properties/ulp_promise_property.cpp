// within_ulp_promise: a LayerNorm forward kernel that promises y within k ULP
// of the exact result (Kernel::ulp_promise, with gamma = 1 and beta = 0, for
// every finite row) keeps it. The tolerance is the promise itself: the ULP
// distance of metrics.h against the exact reference, no slack.
#include <rapidcheck.h>

#include <sstream>

#include "normcheck/evaluate.h"
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
  const Evaluation e = evaluate(kernel, problem);
  RC_PRE(e.declined.empty());
  if (!(e.max_ulp <= kernel.ulp_promise)) {
    std::ostringstream why;
    why << kernel.name << " promises " << kernel.ulp_promise << " ULP, max ULP error " << e.max_ulp;
    RC_FAIL(why.str());
  }
}

}  // namespace

constinit const PropertyDef kWithinUlpPromise = {"within_ulp_promise", promises_ulps,
                                                 unit_affine_options, within_ulp_promise};

}  // namespace normcheck::props
