// nonfinite_propagation: a row with NaN or +-inf in x (or, backward, in dy)
// keeps the fault in its main output (docs/semantics.md, "Rows with a
// non-finite input"): every element non-finite (the row-NaN convention or the
// IEEE evaluation; NaN or either infinity), except RMSNorm forward on a row
// whose non-finite values are all infinities, where the IEEE evaluation gives
// y_j = +-0 at a finite x_j (rrms = 1/sqrt(+inf) = +0); and the rest of the
// problem stays within the bound. Checked twice: by evaluate() against the
// reference, and directly on the kernel's output so a mistake in evaluate()'s
// rule cannot hide one in the kernel (a norm followed by a Linear: by
// evaluate() only).
#include <cmath>

#include <rapidcheck.h>

#include "compare.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

// A row with a spec of its own is not its op's textbook form (judged.h);
// within_bound holds it to the non-finite rule (evaluate() judges those rows too).
bool handles_nonfinite(const Kernel& kernel) {
  return kernel.range.handles_nonfinite && textbook_op(kernel);
}

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

bool row_has_nan(const std::vector<float>& v, int64_t row, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c)
    if (std::isnan(v[static_cast<size_t>(row * cols + c)])) return true;
  return false;
}

void nonfinite_propagation(const Kernel& kernel, const Problem& p) {
  if (is_norm_linear(kernel.op)) {
    // z keeps no per-element record (its allowance has no one xhat), so the
    // check is evaluate()'s alone: every z of a row with a non-finite x must
    // be non-finite (verify/evaluate/norm_linear.cpp).
    const Evaluation e = evaluate(kernel, p);
    RC_PRE(e.declined.empty());
    require_pass(e);
    return;
  }
  const Evaluation e = judged(kernel, p);
  require_pass(e);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (row_finite(p.x, r, p.cols) && row_finite(p.dy, r, p.cols)) continue;
    // RMSNorm forward's IEEE zeros: a row of infinities without NaN, a finite x_j and gamma_j
    const bool zeros_admitted = kernel.op == Op::rmsnorm_fwd && !row_has_nan(p.x, r, p.cols);
    for (int64_t c = 0; c < p.cols; ++c) {
      const auto i = static_cast<size_t>(r * p.cols + c);
      const float v = e.main_elements[i].computed;
      const bool ieee_zero = zeros_admitted && std::isfinite(p.x[i]) &&
                             (p.gamma.empty() || std::isfinite(p.gamma[static_cast<size_t>(c)])) && v == 0;
      if (std::isfinite(v) && !ieee_zero)
        RC_FAIL("row " + std::to_string(r) + " has a non-finite input but output col " +
                std::to_string(c) + " is " + std::to_string(v) + ", finite where every convention is not");
    }
  }
}

}  // namespace

constinit const PropertyDef kNonfinitePropagation = {"nonfinite_propagation", handles_nonfinite,
                                                     with_nonfinite, nonfinite_propagation};

}  // namespace normcheck::props
