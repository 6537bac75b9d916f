// within_bound: every output (y, mean, rstd / dx, dgamma, dbeta / rrms) is
// within the kernel's declared a-priori bound of the exact reference, NaN/inf
// exactly where the reference has them. evaluate() is the judge.
#include <rapidcheck.h>

#include "compare.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool every_kernel(const Kernel&) { return true; }

void within_bound(const Kernel& kernel, const Problem& problem) {
  const Evaluation e = evaluate(kernel, problem);
  RC_PRE(e.declined.empty());
  require_pass(e);
}

}  // namespace

constinit const PropertyDef kWithinBound = {"within_bound", every_kernel, options_for, within_bound};

}  // namespace normcheck::props
