#include "allowance.h"

#include <cmath>
#include <limits>

#include "normcheck/reference.h"

namespace normcheck::props {
namespace {

constexpr double kNoPromise = std::numeric_limits<double>::infinity();

double at(const std::vector<float>& v, size_t i, double missing) {
  return v.empty() ? missing : static_cast<double>(v[i]);
}

// sigma^2 + eps = 0 (a constant row with eps = 0): evaluate() checks nothing
// there, so neither do the invariants beyond NaN matching NaN.
bool ill_posed(const RowStats& s) { return s.finite && std::isinf(s.r); }

void forward_allowances(const Kernel& kernel, const Problem& p, const std::vector<RowStats>& stats,
                        Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const RowStats& s = stats[static_cast<size_t>(r)];
    const Bound b = kernel.bound(row_condition(s));
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      out.main[i] = ill_posed(s) ? kNoPromise
                                 : y_allowance(b, at(p.gamma, static_cast<size_t>(c), 1.0),
                                               at(p.beta, static_cast<size_t>(c), 0.0), out.xhat[i]);
    }
  }
}

template <typename Reference>
void backward_allowances(const Kernel& kernel, const Problem& p, const Reference& ref, Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const auto row = static_cast<size_t>(r);
    const RowStats& s = ref.stats[row];
    const Bound b = kernel.bound(row_condition(s));
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      const double g = at(p.gamma, static_cast<size_t>(c), 1.0) * p.dy[i];
      out.main[i] = ill_posed(s) ? kNoPromise
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
      forward_allowances(kernel, p, ref.stats, out);
      break;
    }
    case Op::rmsnorm_fwd: {
      const auto ref = reference_rmsnorm_fwd(p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      forward_allowances(kernel, p, ref.stats, out);
      break;
    }
    case Op::layernorm_bwd: {
      const auto ref = reference_layernorm_bwd(p.dy, p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      backward_allowances(kernel, p, ref, out);
      break;
    }
    case Op::rmsnorm_bwd: {
      const auto ref = reference_rmsnorm_bwd(p.dy, p.x, p.gamma, p.rows, p.cols, p.eps);
      out.xhat = ref.xhat.exact;
      backward_allowances(kernel, p, ref, out);
      break;
    }
  }
  return out;
}

bool row_promised(const Allowances& a, int64_t row, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    const auto i = static_cast<size_t>(row * cols + c);
    if (!std::isfinite(a.main[i]) || !std::isfinite(a.xhat[i])) return false;
  }
  return true;
}

}  // namespace normcheck::props
