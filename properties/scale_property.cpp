// scale_invariance: for eps = 0, LN(a x) = LN(x) and RMSNorm(a x) = RMSNorm(x)
// for a > 0 (mu, sigma and the rms all scale by a). a = m 2^k with m in
// {1, 3, 5, 7}: on the grid of on_grid() x = n s with |n| <= 2^20, so
// a x = (m n) 2^k s has at most 23 significant bits and is exact as long as
// 2^k s >= 2^-149 and |a x| <= the kernel's range, which k is chosen to keep.
// Tolerance: the sum of the bound allowances on x and a x (invariants.h).
#include <algorithm>
#include <cmath>

#include <rapidcheck.h>

#include "generators.h"
#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool applies(const Kernel& kernel) {
  return invariant_applies(kernel) && (kernel.op == Op::layernorm_fwd || kernel.op == Op::rmsnorm_fwd);
}

GenOptions eps_zero(const Kernel& kernel) {
  GenOptions opts = finite_options_for(kernel);
  opts.eps = 0.0f;
  return opts;
}

void scale_invariance(const Kernel& kernel, const Problem& p) {
  const Grid g = on_grid(p, kernel.range);
  double top_steps = 1;
  for (float v : g.problem.x) top_steps = std::max(top_steps, std::fabs(v / g.spacing));
  const int m = *rc::gen::element(1, 3, 5, 7);
  const int s_exponent = std::ilogb(g.spacing);
  const int k_low = std::max(-20, -149 - s_exponent);
  const int k_high = std::min(20, std::ilogb(max_abs_x(kernel.range, p.cols) / (m * top_steps * g.spacing)));
  RC_PRE(k_low <= k_high);
  const int k = *rc::gen::inRange(k_low, k_high + 1);
  const float a = std::ldexp(static_cast<float>(m), k);
  Problem scaled = g.problem;
  for (auto& v : scaled.x) v *= a;  // exact, see above
  const Evaluation original = judged(kernel, g.problem);
  require_invariant(kernel, "K(a x) vs K(x), eps = 0", original, scaled, main_values(original));
}

}  // namespace

constinit const PropertyDef kScaleInvariance = {"scale_invariance", applies, eps_zero, scale_invariance};

}  // namespace normcheck::props
