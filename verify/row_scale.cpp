#include "normcheck/row_scale.h"

#include <cmath>
#include <limits>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "normcheck/reference.h"

namespace normcheck {

bool centred(Op op) { return op == Op::layernorm_fwd || op == Op::layernorm_bwd || op == Op::layernorm_linear_fwd; }

std::vector<float> norm_inputs(const Kernel& k, const Problem& p) {
  const OpSpec spec = spec_of(k);
  const DType x_t = spec.dtype_of(TensorName::x), res_t = spec.dtype_of(TensorName::residual);
  const bool fused_add = spec.add && spec.direction == Direction::fwd && p.residual.size() == p.x.size();
  std::vector<float> s(p.x.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto x = static_cast<float>(round_to_format(x_t, p.x[i]));
    s[i] = fused_add ? norm_input(spec, x, static_cast<float>(round_to_format(res_t, p.residual[i]))) : x;
  }
  return s;
}

std::vector<RowScale> row_scales(Op op, std::span<const float> x, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return {};
  // The statistics do not depend on eps; the problem's is passed as the reference takes one.
  const std::vector<RowStats> stats = centred(op) ? reference_layernorm_fwd_statistics(x, rows, cols, eps).stats
                                                  : reference_rmsnorm_fwd_statistics(x, rows, cols, eps).stats;
  std::vector<RowScale> scales(stats.size());
  for (std::size_t r = 0; r < stats.size(); ++r) scales[r] = row_scale(op, stats[r]);
  return scales;
}

RowScale row_scale(Op op, const RowStats& s) {
  RowScale scale;
  scale.finite = s.finite;
  scale.scale_square = s.variance;
  scale.mean_over_sigma = !centred(op)      ? std::numeric_limits<double>::quiet_NaN()
                          : s.variance > 0 ? std::fabs(s.mean) / std::sqrt(s.variance)
                                           : std::numeric_limits<double>::infinity();
  return scale;
}

std::vector<RowScale> row_scales(const Kernel& k, const Problem& p) {
  return row_scales(k.op, norm_inputs(k, p), p.rows, p.cols, p.eps);
}

}  // namespace normcheck
