// RMSNorm backward with the forward's saved rrms: xhat = x * rrms,
// dx = rrms * (g - xhat * mean(g xhat)), g = gamma * dy; dgamma = sum_rows dy xhat.
// Forming xhat before any product keeps every intermediate near the size of
// g: sum g x would overflow for |x| near FLT_MAX.
#include <algorithm>
#include <cmath>

#include "backward_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {

// Error bound (docs/accuracy_backward.md, section RMSNorm backward).
//
// Exact: y = gamma x r, dr/dx_j = -r^3 x_j / d, so dx_i = r (g_i - xhat_i P),
// P = mean(g xhat), xhat = x r. The saved rrms is r^ = r (1 + rho), |rho| <= u.
//   h_j = fl(x_j r^) = xhat_j (1 + theta_2)
//   mp  = fl(fl(sum_j fl(g_j h_j)) / d) = (1/d) sum_j g_j xhat_j (1 + theta_{d+4})
//         (g_j = fl(gamma_j dy_j), the product, d - 1 additions, the division)
//   dx^_i = fl(r^ fl(g_i - fl(h_i mp)))
//         = r [g_i (1 + theta_4) - xhat_i (1/d) sum_j g_j xhat_j (1 + theta_{d+10})]
// so |dx^_i - dx_i| <= r (gamma_4 |g_i| + gamma_{d+10} |xhat_i| mean|g xhat|).
// No mean enters, so nothing cancels: there is no kappa term.
// dgamma_j = sum_rows fl(dy h_j): gamma_{rows+2} sum |dy xhat|.
// Gradual underflow (when c.r is known), 0x1p-150 absolute per product or
// quotient below 0x1p-126, |h| <= H = sqrt(d)(1 + gamma_2) + 1 (|xhat| <= sqrt(d)):
// in dx / r, one unit from g_i, H (2 + H) from mp times h_i, one from h_i mp; one
// unit for the final product; an underflowed h_j adds 0x1p-150 |g_j| and
// 0x1p-150 |mp| terms (2 (1 + gamma_{d+10}) 0x1p-150 on the scale terms).
// dgamma: rows units from the products, 0x1p-150 sum|dy| from h.
Bound rmsnorm_bwd_bound(const RowCondition& c) {
  constexpr double tiny = 0x1p-150;
  const double d = static_cast<double>(c.d);
  const double rows = static_cast<double>(c.rows);
  const double g_long = gamma_n(d + 10);
  const double g_rows = gamma_n(rows + 2);
  const double max_h = std::sqrt(d) * (1 + gamma_n(2)) + 1;
  const double underflow_scale = 2 * (1 + g_long) * tiny;
  Bound b;
  b.dx_g = gamma_n(4);
  b.dx_proj_rel = g_long;
  b.dx_mean_g = underflow_scale;
  b.dx_xhat_mean_g = underflow_scale;
  b.dx_proj_abs = underflow_scale;
  b.dgamma_rel = g_rows;
  b.dgamma_abs = (1 + g_rows) * tiny;
  const double dx_underflow = tiny * (1 + c.r * (1 + g_long) * (2 + max_h * (2 + max_h)));
  b.underflow_abs = std::max(dx_underflow, tiny * rows * (1 + g_rows));
  return b;
}

namespace {

void rmsnorm_bwd_scalar(const float* dy, const float* x, const float* gamma, const float* rrms,
                        float* dx, float* dgamma, int64_t rows, int64_t cols) {
  const float d = static_cast<float>(cols);
  const auto row_step = [&](const scalar::BackwardRow& row) {
    const float a = row.rstd;
    float sum_g_xhat = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = row.x[j] * a;
      const float g = gamma ? gamma[j] * row.dy[j] : row.dy[j];
      sum_g_xhat += g * xhat;
      if (dgamma) dgamma[j] += row.dy[j] * xhat;
    }
    if (scalar::nan_dx_for_nonfinite_row(row.x, row.dy, row.dx, cols)) return;
    const float mean_g_xhat = sum_g_xhat / d;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = row.x[j] * a;
      const float g = gamma ? gamma[j] * row.dy[j] : row.dy[j];
      row.dx[j] = a * (g - xhat * mean_g_xhat);
    }
  };
  scalar::for_each_backward_row(dy, x, nullptr, rrms, dx, dgamma, nullptr, rows, cols, row_step);
}

}  // namespace

extern const Kernel kRmsNormBwdScalar;
constinit const Kernel kRmsNormBwdScalar = scalar::backward_row(
    "rmsnorm_bwd.scalar", Op::rmsnorm_bwd, Origin::ours, &rmsnorm_bwd_scalar, &rmsnorm_bwd_bound,
    "saved rrms; xhat = x*rrms, dx = rrms*(g - xhat*mean(g*xhat)), g = gamma*dy; "
    "dgamma summed in row order");

}  // namespace normcheck
