// The checks LayerNorm and RMSNorm backward share: dx row by row, dgamma and
// dbeta column by column (over every row).
#include <limits>

#include "allowance.h"
#include "op.h"
#include "row_rules.h"
#include "scale.h"

namespace normcheck::evaluation {

std::string start_backward(const OpRun& run, BackwardStart& start) {
  start.x = store(run.kernel.dtype, run.problem.x);
  start.dy = store(run.kernel.dtype, run.problem.dy);
  start.reference = &reference_before_the_call(run, start.x.widened, start.own);
  Request request = request_for(run.kernel, run.problem);
  // The saved statistic: the forward's rstd or rrms correctly rounded.
  request.saved_statistic = run.kernel.op == Op::layernorm_bwd ? start.reference->layernorm_fwd.rstd.rounded
                                                              : start.reference->rmsnorm_fwd.rrms.rounded;
  return declines(run.kernel, request);
}

void tally_backward(Tally& tally, Op op, const BackwardExact& ref, const Problem& p,
                    const std::vector<float>& dy, BoundFn bound, DType dtype, const Readback& dx,
                    const Readback& dgamma, const Readback* dbeta, MainElement* kept) {
  for (int64_t row = 0; row < p.rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(op, s)) continue;
    const bool inputs_finite = row_inputs_finite(s, dy, row, p.cols);
    const Bound b = bound(row_condition(s));
    const double scale = dx_scale(s, ref.mean_abs_g[r], ref.mean_abs_g_xhat[r]);
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      if (!inputs_finite) {
        // A non-finite x or dy: dx is non-finite in every standard form
        // (docs/semantics.md), so the IEEE evaluation is non-finite throughout.
        tally.nonfinite_row_element("dx", row, col, dx.values[i], std::nullopt);
        if (kept) kept[i].allowed = 0;
        continue;
      }
      const double g = at_or(p.gamma, static_cast<std::size_t>(col), 1) * dy[i];
      const double allowed = dx_allowance(b, s.r, g, ref.xhat[i], ref.mean_abs_g[r], ref.mean_abs_g_xhat[r]);
      tally.element("dx", row, col, dx.values[i], ref.dx[i], allowed, dtype, scale);
      if (kept) kept[i].allowed = allowed;
    }
  }

  const RowCondition cc = column_condition(op, ref.stats, p.rows);
  const Bound bc = bound(cc);
  const bool dgamma_checked = dgamma_promised(ref.stats);
  // dgamma and dbeta are the extended reals' column sums under both
  // conventions, held as exact values (docs/semantics.md). Where an infinite
  // dy_j meets an xhat_j whose sign the bound does not fix, the exact
  // dgamma_j is NaN or an infinity the kernel's rounding of xhat_j decides:
  // any non-finite value is admitted there, a finite one is not.
  const std::vector<bool> unsigned_inf = columns_with_unsigned_infinity(bc, ref.stats, ref.xhat, dy, p.cols);
  for (std::size_t col = 0; col < static_cast<std::size_t>(p.cols); ++col) {
    const auto c = static_cast<int64_t>(col);
    if (dgamma_checked && unsigned_inf[col]) {
      tally.nonfinite_element("dgamma", -1, c, dgamma.values[col], ref.dgamma[col]);
    } else {
      const double allowed = dgamma_checked ? dgamma_allowance(bc, ref.sum_abs_dy_xhat[col], ref.sum_abs_dy[col])
                                            : std::numeric_limits<double>::infinity();
      tally.element("dgamma", -1, c, dgamma.values[col], ref.dgamma[col], allowed, DType::f32,
                    dgamma_scale(cc.kappa, ref.sum_abs_dy_xhat[col], ref.sum_abs_dy[col]));
    }
    if (dbeta)
      tally.element("dbeta", -1, c, dbeta->values[col], (*ref.dbeta)[col], dbeta_allowance(bc, ref.sum_abs_dy[col]),
                    DType::f32, ref.sum_abs_dy[col]);
  }
}

}  // namespace normcheck::evaluation
