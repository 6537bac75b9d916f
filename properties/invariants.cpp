#include "invariants.h"

#include <algorithm>
#include <cmath>

#include <rapidcheck.h>

#include "allowance.h"
#include "compare.h"
#include "generators.h"
#include "run_kernel.h"

namespace normcheck::props {

bool invariant_applies(const Kernel& kernel) { return runnable(kernel); }

Grid on_grid(const Problem& p, const InputRange& range) {
  double top = 0;
  for (float v : p.x) top = std::max(top, std::fabs(static_cast<double>(v)));
  const double limit = max_abs_x(range, p.cols);
  // Spacing: the largest |x| becomes about 2^20 grid steps...
  int k = top > 0 ? std::ilogb(top) + 1 - 20 : -149;
  // ... unless shifts by 2^22 steps would leave the range ...
  k = std::min(k, std::ilogb(limit / (0x1p20 + 0x1p22)));
  // ... and never below the smallest subnormal.
  k = std::max(k, -149);
  Grid g{p, std::ldexp(1.0, k)};
  for (auto& v : g.problem.x) {
    const double steps = std::clamp(std::nearbyint(v / g.spacing), -0x1p20, 0x1p20);
    v = static_cast<float>(steps * g.spacing);  // exact: |steps| <= 2^20, spacing a float power of 2
  }
  return g;
}

std::vector<double> summed_allowance(const Kernel& kernel, const Problem& p, const Problem& q,
                                     const std::vector<size_t>& order) {
  const auto a = allowances(kernel, p).main;
  const auto b = allowances(kernel, q).main;
  std::vector<double> sum(b.size());
  for (size_t i = 0; i < b.size(); ++i) sum[i] = b[i] + a[order.empty() ? i : order[i]];
  return sum;
}

void require_invariant(const Kernel& kernel, const char* what, const Problem& p, const Problem& q,
                       const std::vector<float>& expected, const std::vector<size_t>& order) {
  RC_PRE(declines(kernel, {request_for(kernel, q).shape}).empty());
  require_within(what, run_kernel(kernel, q).main, expected, summed_allowance(kernel, p, q, order));
}

}  // namespace normcheck::props
