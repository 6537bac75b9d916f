// nonfinite_propagation: a row with NaN or +-inf in x (or, backward, in dy)
// gives an all-NaN main output row (docs/semantics.md, the agreed semantics),
// and the rest of the problem stays within the bound. Checked twice: by
// evaluate() against the reference, and directly on the kernel's output so a
// mistake in the reference's NaN handling cannot hide one in the kernel (a
// norm followed by a Linear: by evaluate() only).
#include <cmath>

#include <rapidcheck.h>

#include "compare.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

bool handles_nonfinite(const Kernel& kernel) { return kernel.range.handles_nonfinite; }

GenOptions with_nonfinite(const Kernel& kernel) {
  GenOptions opts = options_for(kernel);
  opts.force_nonfinite = true;
  return opts;
}

bool row_finite(const std::vector<float>& v, int64_t row, int64_t cols) {
  if (v.empty()) return true;
  for (int64_t c = 0; c < cols; ++c)
    if (!std::isfinite(v[static_cast<size_t>(row * cols + c)])) return false;
  return true;
}

void nonfinite_propagation(const Kernel& kernel, const Problem& p) {
  if (is_norm_linear(kernel.op)) {
    // z keeps no per-element record (its allowance has no one xhat), so the
    // check is evaluate()'s alone: every z of a row with a non-finite x must
    // be NaN (verify/evaluate/norm_linear.cpp).
    const Evaluation e = evaluate(kernel, p);
    RC_PRE(e.declined.empty());
    require_pass(e);
    return;
  }
  const Evaluation e = judged(kernel, p);
  require_pass(e);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (row_finite(p.x, r, p.cols) && row_finite(p.dy, r, p.cols)) continue;
    for (int64_t c = 0; c < p.cols; ++c) {
      const float v = e.main_elements[static_cast<size_t>(r * p.cols + c)].computed;
      if (!std::isnan(v))
        RC_FAIL("row " + std::to_string(r) + " has a non-finite input but output col " +
                std::to_string(c) + " is " + std::to_string(v) + ", not NaN");
    }
  }
}

}  // namespace

constinit const PropertyDef kNonfinitePropagation = {"nonfinite_propagation", handles_nonfinite,
                                                     with_nonfinite, nonfinite_propagation};

}  // namespace normcheck::props
