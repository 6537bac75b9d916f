#include "allowance.h"

#include <stdexcept>
#include <cmath>
#include <limits>

#include "normcheck/reference.h"

namespace normcheck::props {
namespace {

constexpr double kNoPromise = std::numeric_limits<double>::infinity();

double at(const std::vector<float>& v, size_t i, double missing) {
  return v.empty() ? missing : static_cast<double>(v[i]);
}

bool finite_row(const std::vector<float>& v, int64_t row, int64_t cols) {
  for (int64_t c = 0; c < cols && !v.empty(); ++c)
    if (!std::isfinite(v[static_cast<size_t>(row * cols + c)])) return false;
  return true;
}

void forward_allowances(const Kernel& kernel, const Problem& p, const std::vector<RowStats>& stats,
                        Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const RowStats& s = stats[static_cast<size_t>(r)];
    const Bound b = kernel.bound(row_condition(s));
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      out.main[i] = !row_checked(kernel.op, s) ? kNoPromise
                    : !s.finite                ? 0.0
                                               : y_allowance(b, at(p.gamma, static_cast<size_t>(c), 1.0),
                                                             at(p.beta, static_cast<size_t>(c), 0.0),
                                                             out.xhat[i]);
    }
  }
}

template <typename Reference>
void backward_allowances(const Kernel& kernel, const Problem& p, const Reference& ref, Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const auto row = static_cast<size_t>(r);
    const RowStats& s = ref.stats[row];
    const Bound b = kernel.bound(row_condition(s));
    const bool inputs_finite = s.finite && finite_row(p.dy, r, p.cols);
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      const double g = at(p.gamma, static_cast<size_t>(c), 1.0) * p.dy[i];
      out.main[i] = !row_checked(kernel.op, s) ? kNoPromise
                    : !inputs_finite           ? 0.0
                                               : dx_allowance(b, s.r, g, out.xhat[i], ref.mean_abs_g[row],
                                                              ref.mean_abs_g_xhat[row]);
    }
  }
}

}  // namespace

Allowances allowances(const Kernel& kernel, const Problem& p) {
  Allowances out;
  out.main.assign(static_cast<size_t>(p.rows * p.cols), 0.0);
  switch (kernel.op) {
    case Op::layernorm_fwd: {
      const auto ref = reference_layernorm_fwd(p.x, p.gamma, p.beta, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      out.exact = ref.y.exact;
      forward_allowances(kernel, p, ref.stats, out);
      break;
    }
    case Op::rmsnorm_fwd: {
      const auto ref = reference_rmsnorm_fwd(p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      out.exact = ref.y.exact;
      forward_allowances(kernel, p, ref.stats, out);
      break;
    }
    case Op::layernorm_bwd: {
      const auto ref = reference_layernorm_bwd(p.dy, p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      out.exact = ref.dx.exact;
      backward_allowances(kernel, p, ref, out);
      break;
    }
    case Op::rmsnorm_bwd: {
      const auto ref = reference_rmsnorm_bwd(p.dy, p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      out.exact = ref.dx.exact;
      backward_allowances(kernel, p, ref, out);
      break;
    }
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd:
      // The invariance properties that use these allowances apply to runnable()
      // kernels only, and a norm followed by a Linear is not one (run_kernel.h).
      throw std::logic_error("allowances: " + std::string(kernel.name) +
                             " is a norm followed by a Linear; evaluate() holds it to its z bound");
  }
  return out;
}

bool row_promised(const Allowances& a, int64_t row, int64_t cols) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  for (int64_t c = 0; c < cols; ++c) {
    const auto i = static_cast<size_t>(row * cols + c);
    if (!std::isfinite(a.main[i]) || !std::isfinite(a.xhat[i]) ||
        !(std::fabs(a.exact[i]) + a.main[i] <= kFloatMax))
      return false;
  }
  return true;
}

}  // namespace normcheck::props
