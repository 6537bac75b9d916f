#include "row_rules.h"

#include <algorithm>
#include <vector>
#include <cmath>
#include <span>

namespace normcheck {
namespace evaluation {

bool ill_posed(const RowStats& s) { return s.finite && std::isinf(s.r); }

}  // namespace evaluation

bool realistic_row(const RowScale& centred, std::span<const float> s) {
  const auto d = static_cast<double>(s.size());
  if (!centred.finite || s.empty() || !(centred.scale_square >= 0x1p-126) || !(centred.mean_over_sigma <= 0x1p20 / d))
    return false;
  // the median absolute deviation from the median (the upper median of each: a bound within the halves)
  std::vector<double> v(s.begin(), s.end());
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), middle, v.end());
  const double median = *middle;
  for (double& e : v) e = std::fabs(e - median);
  std::nth_element(v.begin(), middle, v.end());
  return *middle >= std::sqrt(centred.scale_square) / 8;
}

namespace evaluation {

// fl(r) = r (1 + rho) with |rho| <= u exactly for r in [2^-126, 2^128 - 2^103)
// (evaluate.h, row_checked). r is the exact value rounded to double; the
// thresholds are doubles, so the rounding can only move r onto a threshold,
// never across one.
bool saved_statistic_within_u(const RowStats& s) { return s.r >= 0x1p-126 && s.r < 0x1p128 - 0x1p103; }

bool row_inputs_finite(const RowStats& s, const std::vector<float>& dy, int64_t row, int64_t cols) {
  if (!s.finite) return false;
  for (int64_t c = 0; c < cols && !dy.empty(); ++c)
    if (!std::isfinite(dy[static_cast<std::size_t>(row * cols + c)])) return false;
  return true;
}

// Every magnitude of a RowCondition: a column's is the largest of its rows'.
constexpr double RowCondition::*kLargestOverRows[] = {
    &RowCondition::kappa,      &RowCondition::max_kappa, &RowCondition::eps_share,     &RowCondition::r,
    &RowCondition::max_abs_dy, &RowCondition::max_abs_g, &RowCondition::max_abs_gamma,
};

// kernel.h says rows set and kappa, max_kappa (and the other magnitudes) the
// largest over the rows that are checked and have finite x (a row with
// non-finite x has a NaN xhat, which makes every dgamma column NaN). A
// non-finite dy only makes its own column non-finite; the dy magnitudes are
// over the finite values (reference.h).
RowCondition column_condition(Op op, const std::vector<RowStats>& stats, int64_t rows) {
  RowCondition c;
  c.rows = rows;
  for (const RowStats& s : stats) {
    const RowCondition rc = row_condition(s);
    c.d = rc.d;
    if (!s.finite || !row_checked(op, s)) continue;
    for (double RowCondition::*largest : kLargestOverRows) c.*largest = std::max(c.*largest, rc.*largest);
  }
  return c;
}

// dgamma sums dy xhat over every row: a backward row whose saved statistic is
// not within u (row_checked) puts NaN or garbage into every column, so the
// bound promises nothing for dgamma then. (An ill-posed row's exact xhat is
// NaN, so is the exact dgamma, and the kernel must give NaN.)
bool dgamma_promised(const std::vector<RowStats>& stats) {
  return std::all_of(stats.begin(), stats.end(), [](const RowStats& s) {
    return !s.finite || ill_posed(s) || saved_statistic_within_u(s);
  });
}

// dgamma_j = sum_rows dy_j xhat_j in the extended reals: an infinite dy_j
// gives +-inf by the sign of xhat_j. The kernel's xhat_j is within
// dgamma_rel |xhat_j| + dgamma_abs of the exact one (the dgamma bound per unit
// of |dy|); where |xhat_j| is no larger than that, the bound does not fix its
// sign and inf * xhat^_j may be +inf, -inf or NaN (e.g. x_j = fl(mu) != mu:
// every kernel sees x_j - mean^ = 0). Such a column promises a non-finite
// value of any kind (Tally::nonfinite_element).
std::vector<bool> columns_with_unsigned_infinity(const Bound& bc, const std::vector<RowStats>& stats,
                                                 const std::vector<double>& xhat,
                                                 const std::vector<float>& dy, int64_t cols) {
  std::vector<bool> unsigned_inf(static_cast<std::size_t>(cols), false);
  for (std::size_t row = 0; row < stats.size(); ++row) {
    if (!stats[row].finite) continue;
    for (std::size_t col = 0; col < unsigned_inf.size(); ++col) {
      const std::size_t i = row * unsigned_inf.size() + col;
      const double h = std::fabs(xhat[i]);
      if (std::isinf(dy[i]) && !(h > bc.dgamma_rel * h + bc.dgamma_abs)) unsigned_inf[col] = true;
    }
  }
  return unsigned_inf;
}

}  // namespace evaluation

RowCondition row_condition(const RowStats& stats) {
  RowCondition c = stats.condition;
  c.rows = 1;
  c.r = stats.r;
  // eps r^2 is 0 * inf when sigma^2 + eps = 0; such rows are not checked, and
  // a 0 share keeps the bound's arithmetic free of NaN for what is (the mean).
  if (std::isnan(c.eps_share)) c.eps_share = 0;
  return c;
}

bool row_checked(Op op, const RowStats& stats) {
  if (!stats.finite) return true;
  if (evaluation::ill_posed(stats)) return false;
  const bool backward = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
  return !backward || evaluation::saved_statistic_within_u(stats);
}

}  // namespace normcheck
