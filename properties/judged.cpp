#include "judged.h"

#include <cmath>
#include <limits>

#include <rapidcheck.h>

namespace normcheck::props {

bool textbook_op(const Kernel& kernel) { return !kernel.spec; }

bool runnable(const Kernel& kernel) {
  return kernel.dtype == DType::f32 && !is_norm_linear(kernel.op) && textbook_op(kernel);
}

Evaluation judged(const Kernel& kernel, const Problem& problem) {
  EvaluateOptions options;
  options.keep_main_elements = true;
  Evaluation e = evaluate(kernel, problem, options);
  RC_PRE(e.declined.empty());
  return e;
}

std::vector<float> main_values(const Evaluation& judged) {
  std::vector<float> v;
  v.reserve(judged.main_elements.size());
  for (const MainElement& m : judged.main_elements) v.push_back(m.computed);
  return v;
}

std::vector<double> main_allowances(const Evaluation& judged) {
  std::vector<double> v;
  v.reserve(judged.main_elements.size());
  for (const MainElement& m : judged.main_elements) v.push_back(m.allowed);
  return v;
}

bool row_promised(const Evaluation& judged, int64_t row, int64_t cols) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  for (int64_t c = 0; c < cols; ++c) {
    const MainElement& m = judged.main_elements[static_cast<std::size_t>(row * cols + c)];
    if (!std::isfinite(m.allowed) || !std::isfinite(m.xhat) || !(std::fabs(m.exact) + m.allowed <= kFloatMax))
      return false;
  }
  return true;
}

}  // namespace normcheck::props
