// The checks LayerNorm and RMSNorm backward share: dx row by row, dgamma and
// dbeta column by column (over every row).
#include <limits>

#include "allowance.h"
#include "op.h"
#include "row_rules.h"

namespace normcheck::evaluation {

void tally_backward(Tally& tally, Op op, const BackwardExact& ref, const Problem& p,
                    const std::vector<float>& dy, BoundFn bound, DType dtype, const Readback& dx,
                    const Readback& dgamma, const Readback* dbeta, MainElement* kept) {
  for (int64_t row = 0; row < p.rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(op, s)) continue;
    const bool inputs_finite = row_inputs_finite(s, dy, row, p.cols);
    const Bound b = bound(row_condition(s));
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      const double g = at_or(p.gamma, static_cast<std::size_t>(col), 1) * dy[i];
      // a row with non-finite x or dy: dx must be NaN, whatever the bound
      const double allowed = inputs_finite ? dx_allowance(b, s.r, g, ref.xhat[i], ref.mean_abs_g[r],
                                                          ref.mean_abs_g_xhat[r])
                                           : 0;
      tally.element("dx", row, col, dx.values[i], ref.dx[i], allowed, true, dtype);
      if (kept) kept[i].allowed = allowed;
    }
  }

  const Bound bc = bound(column_condition(op, ref.stats, p.rows));
  const bool dgamma_checked = dgamma_promised(ref.stats);
  const std::vector<bool> unsigned_inf = columns_with_unsigned_infinity(bc, ref.stats, ref.xhat, dy, p.cols);
  for (std::size_t col = 0; col < static_cast<std::size_t>(p.cols); ++col) {
    const auto c = static_cast<int64_t>(col);
    const double dgamma_allowed = dgamma_checked && !unsigned_inf[col]
                                      ? dgamma_allowance(bc, ref.sum_abs_dy_xhat[col], ref.sum_abs_dy[col])
                                      : std::numeric_limits<double>::infinity();
    tally.element("dgamma", -1, c, dgamma.values[col], ref.dgamma[col], dgamma_allowed, true, DType::f32);
    if (dbeta)
      tally.element("dbeta", -1, c, dbeta->values[col], (*ref.dbeta)[col],
                    dbeta_allowance(bc, ref.sum_abs_dy[col]), true, DType::f32);
  }
}

}  // namespace normcheck::evaluation
