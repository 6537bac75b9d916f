// shift_invariance: LN(x + c) = LN(x) exactly (mu moves by c, x - mu does not),
// for the forward y and the backward dx. x is put on a grid of spacing s and
// c = m s with |m| <= 2^22, so x + c is exact in float (|x + c| < 2^24 s) and
// the two exact results are equal. Tolerance: the sum of the kernel's bound
// allowances on both inputs (invariants.h). Large m makes |mu|/sigma large on
// the shifted side, which is where one-pass variance fails.
#include <rapidcheck.h>

#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool applies(const Kernel& kernel) {
  return invariant_applies(kernel) && (kernel.op == Op::layernorm_fwd || kernel.op == Op::layernorm_bwd);
}

void shift_invariance(const Kernel& kernel, const Problem& p) {
  const Grid g = on_grid(p, kernel.range);
  const auto steps = *rc::gen::inRange<int64_t>(-(int64_t{1} << 22), (int64_t{1} << 22) + 1);
  const auto c = static_cast<float>(static_cast<double>(steps) * g.spacing);  // exact
  Problem shifted = g.problem;
  for (auto& v : shifted.x) v += c;  // exact: multiples of s below 2^24 s
  const Evaluation original = judged(kernel, g.problem);
  require_invariant(kernel, "K(x + c) vs K(x)", original, shifted, main_values(original));
}

}  // namespace

constinit const PropertyDef kShiftInvariance = {"shift_invariance", applies, finite_options_for,
                                                shift_invariance};

}  // namespace normcheck::props
