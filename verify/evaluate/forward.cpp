// The check LayerNorm and RMSNorm forward share: every y of a row.
#include "allowance.h"
#include "op.h"

namespace normcheck::evaluation {

void tally_y_row(Tally& tally, const Problem& p, const std::vector<float>& beta, int64_t row, const RowStats& s,
                 const Bound& b, const std::vector<double>& xhat, const std::vector<double>& y_exact,
                 const Readback& y, DType dtype, MainElement* kept) {
  for (int64_t col = 0; col < p.cols; ++col) {
    const auto i = static_cast<std::size_t>(row * p.cols + col);
    const auto c = static_cast<std::size_t>(col);
    // a row with non-finite x: y must be NaN, whatever the bound
    const double allowed = s.finite ? y_allowance(b, at_or(p.gamma, c, 1), at_or(beta, c, 0), xhat[i]) : 0;
    tally.element("y", row, col, y.values[i], y_exact[i], allowed, true, dtype);
    if (kept) kept[i].allowed = allowed;
  }
}

}  // namespace normcheck::evaluation
