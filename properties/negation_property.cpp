// negation_symmetry: LN(-x; gamma, -beta) = -LN(x; gamma, beta) and
// RMSNorm(-x) = -RMSNorm(x) (xhat is odd in x); backward, dx(-x, dy) = dx(x, dy)
// (dx depends on xhat through g - mean g - xhat mean(g xhat), even in xhat).
// Negation is exact in float. Tolerance: the sum of the bound allowances on
// both inputs (invariants.h). Round-to-nearest is sign-symmetric, so our
// kernels in fact agree bit for bit; the property asserts only what the bound
// implies.
#include <rapidcheck.h>

#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

void negation_symmetry(const Kernel& kernel, const Problem& p) {
  Problem negated = p;
  for (auto& v : negated.x) v = -v;
  for (auto& v : negated.beta) v = -v;
  const Evaluation original = judged(kernel, p);
  auto expected = main_values(original);
  const bool forward = kernel.op == Op::layernorm_fwd || kernel.op == Op::rmsnorm_fwd;
  if (forward)
    for (auto& v : expected) v = -v;
  require_invariant(kernel, forward ? "K(-x) vs -K(x)" : "dx(-x) vs dx(x)", original, negated, expected);
}

}  // namespace

constinit const PropertyDef kNegationSymmetry = {"negation_symmetry", invariant_applies,
                                                 finite_options_for, negation_symmetry};

}  // namespace normcheck::props
