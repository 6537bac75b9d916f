#include "allowance.h"

#include <cmath>

#include "normcheck/reference.h"

namespace normcheck::props {
namespace {

double at(const std::vector<float>& v, size_t i, double missing) {
  return v.empty() ? missing : static_cast<double>(v[i]);
}

// y:  |y^ - y| <= |gamma_i| (xhat_abs + xhat_rel |xhat_i|) + affine_rel (|gamma_i xhat_i| + |beta_i|)
//                 + underflow_abs
void forward_allowances(const Kernel& kernel, const Problem& p, const std::vector<RowStats>& stats,
                        Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    RowCondition condition = stats[static_cast<size_t>(r)].condition;
    condition.rows = 1;
    const Bound b = kernel.bound(condition);
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      const double gamma = std::fabs(at(p.gamma, static_cast<size_t>(c), 1.0));
      const double beta = std::fabs(at(p.beta, static_cast<size_t>(c), 0.0));
      const double xhat = std::fabs(out.xhat[i]);
      out.main[i] = gamma * (b.xhat_abs + b.xhat_rel * xhat) + b.affine_rel * (gamma * xhat + beta) +
                    b.underflow_abs;
    }
  }
}

// dx: |dx^ - dx| <= r (dx_g |g_i| + (dx_mean_g + dx_xhat_mean_g |xhat_i|) mean|g|
//                      + (dx_proj_abs + dx_proj_rel |xhat_i|) mean|g xhat|) + underflow_abs
template <typename Reference>
void backward_allowances(const Kernel& kernel, const Problem& p, const Reference& ref, Allowances& out) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const auto row = static_cast<size_t>(r);
    const Bound b = kernel.bound(ref.stats[row].condition);
    const double rstd = ref.stats[row].r;
    for (int64_t c = 0; c < p.cols; ++c) {
      const size_t i = static_cast<size_t>(r * p.cols + c);
      const double g = std::fabs(at(p.gamma, static_cast<size_t>(c), 1.0) * p.dy[i]);
      const double xhat = std::fabs(out.xhat[i]);
      out.main[i] = rstd * (b.dx_g * g + (b.dx_mean_g + b.dx_xhat_mean_g * xhat) * ref.mean_abs_g[row] +
                            (b.dx_proj_abs + b.dx_proj_rel * xhat) * ref.mean_abs_g_xhat[row]) +
                    b.underflow_abs;
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

}  // namespace normcheck::props
