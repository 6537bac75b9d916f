// The check LayerNorm and RMSNorm forward share: every y of a row.
#include <span>

#include "allowance.h"
#include "nonfinite.h"
#include "op.h"
#include "scale.h"

namespace normcheck::evaluation {

void tally_y_row(Tally& tally, const Problem& p, Op op, const std::vector<float>& x,
                 const std::vector<float>& beta, int64_t row, const RowStats& s, const Bound& b,
                 const std::vector<double>& xhat, const std::vector<double>& y_exact, const Readback& y,
                 DType dtype, MainElement* kept) {
  const auto cols = static_cast<std::size_t>(p.cols);
  const std::span<const float> x_row(x.data() + static_cast<std::size_t>(row) * cols, cols);
  // a row with a non-finite x: held to the non-finite rule, whatever the bound
  const bool infinities_only = !s.finite && op == Op::rmsnorm_fwd && only_infinities(x_row);
  for (std::size_t c = 0; c < cols; ++c) {
    const std::size_t i = static_cast<std::size_t>(row) * cols + c;
    const auto col = static_cast<int64_t>(c);
    const double gamma = at_or(p.gamma, c, 1), beta_c = at_or(beta, c, 0);
    if (!s.finite) {
      const std::optional<double> ieee =
          op == Op::rmsnorm_fwd ? ieee_rmsnorm_y(infinities_only, x_row[c], gamma) : std::nullopt;
      tally.nonfinite_row_element("y", row, col, y.values[i], ieee);
      if (kept) kept[i].allowed = 0;
      continue;
    }
    const double allowed = y_allowance(b, gamma, beta_c, xhat[i]);
    tally.element("y", row, col, y.values[i], y_exact[i], allowed, dtype, y_scale(s, gamma, beta_c));
    if (kept) kept[i].allowed = allowed;
  }
}

}  // namespace normcheck::evaluation
