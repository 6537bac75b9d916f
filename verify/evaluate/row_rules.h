// Which rows and columns evaluate() holds to the bound, and the condition
// each bound is taken at (evaluate.h: row_checked, row_condition).
#pragma once

#include <cstdint>
#include <vector>

#include "normcheck/evaluate.h"

namespace normcheck::evaluation {

// sigma^2 + eps = 0 on a row with finite x: r = +inf.
bool ill_posed(const RowStats& s);

// fl(r) = r (1 + rho) with |rho| <= u (evaluate.h, row_checked).
bool saved_statistic_within_u(const RowStats& s);

// Every input of the row finite: x (RowStats::finite) and, backward, dy (empty: forward).
bool row_inputs_finite(const RowStats& s, const std::vector<float>& dy, int64_t row, int64_t cols);

// The condition dgamma/dbeta bounds are taken at (kernel.h): rows set, the
// magnitudes the largest over the checked rows with finite x.
RowCondition column_condition(Op op, const std::vector<RowStats>& stats, int64_t rows);

// Whether dgamma promises anything: not when a backward row's saved statistic
// is not within u.
bool dgamma_promised(const std::vector<RowStats>& stats);

// The columns whose exact dgamma is an infinity of a sign the bound does not fix.
std::vector<bool> columns_with_unsigned_infinity(const Bound& bc, const std::vector<RowStats>& stats,
                                                 const std::vector<double>& xhat,
                                                 const std::vector<float>& dy, int64_t cols);

}  // namespace normcheck::evaluation
