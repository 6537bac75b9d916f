#include "invariants.h"

#include <algorithm>
#include <cmath>

#include <rapidcheck.h>

#include "compare.h"
#include "generators.h"
#include "judged.h"

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

std::vector<double> summed_allowance(const Evaluation& judged_p, const Evaluation& judged_q,
                                     const std::vector<size_t>& order) {
  const auto a = main_allowances(judged_p);
  const auto b = main_allowances(judged_q);
  std::vector<double> sum(b.size());
  for (size_t i = 0; i < b.size(); ++i) sum[i] = b[i] + a[order.empty() ? i : order[i]];
  return sum;
}

void require_invariant(const Kernel& kernel, const char* what, const Evaluation& judged_p, const Problem& q,
                       const std::vector<float>& expected, const std::vector<size_t>& order) {
  const Evaluation judged_q = judged(kernel, q);
  require_within(what, main_values(judged_q), expected, summed_allowance(judged_p, judged_q, order));
}

}  // namespace normcheck::props
