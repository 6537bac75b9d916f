// LayerNorm backward, two passes over the row with the forward's saved mean and
// rstd: pass 1 forms xhat = (x - mean) * rstd and the row means of g = gamma*dy
// and g*xhat; pass 2 writes dx = rstd * ((g - mean(g)) - xhat * mean(g xhat))
// (the rows: layernorm_bwd_twopass_rows.h). Here: its bound and its row.
#include <algorithm>
#include <cmath>

#include "layernorm_bwd_twopass_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {

// Error bound of this algorithm (docs/accuracy_backward.md has the long form).
//
// Exact gradient: dx_i = r (g_i - G - xhat_i P), G = mean(g), P = mean(g xhat),
// with mu, r exact. The kernel gets m^ = fl(mu), r^ = fl(r):
// |m^ - mu| <= u|mu| + 0x1p-150 (the second term when mu is subnormal, where
// fl() is off by up to half the subnormal spacing) and r^ = r(1 + rho),
// |rho| <= u (evaluate() checks only rows where that holds). Write
// e_m = (mu - m^) r, so |e_m| <= u |mu| r + 0x1p-150 r <= u kappa + 0x1p-150 r =: e
// (|mu| <= mean|x|; the 0x1p-150 r only when r is known). Higham's model
// fl(a op b) = (a op b)(1 + delta), |delta| <= u = 0x1p-24, products of k
// factors (1 + delta) written (1 + theta_k), |theta_k| <= gamma_k.
//   h_j  = fl(fl(x_j - m^) r^)          = (xhat_j + e_m)(1 + theta_3)
//   g_j  = fl(gamma_j dy_j)             = g_j (1 + theta_1)
//   mp   = fl(fl(sum_j fl(g_j h_j)) / d) = (1/d) sum_j g_j (xhat_j + e_m)(1 + theta_{d+5})
//   mg   = fl(fl(sum_j g_j) / d)        = (1/d) sum_j g_j (1 + theta_{d+1})
// (a sequential sum of d terms puts at most d - 1 factors on each; d <= 2^24
// is exact as a float, and beyond that gamma_d is +inf anyway). Then
//   dx^_i / r = g_i (1 + theta_5) - mg (1 + theta_4) - h_i mp (1 + theta_4)
// (r^'s rho, the rounding of g - mg, of the difference, of the product by r^,
// and of h_i mp). Subtracting dx_i / r and writing A = xhat_i, E = e_m:
//   g term:   gamma_5 |g_i|
//   G term:   gamma_{d+5} mean|g|
//   P term:   (A + E)(P + E G + delta_P) - A P with |delta_P| <= gamma_{d+12}
//             (mean|g xhat| + e mean|g|), i.e. at most
//             gamma_{d+12} |A| mean|g xhat|            (dx_proj_rel)
//           + e (1 + gamma_{d+12}) |A| mean|g|         (dx_xhat_mean_g)
//           + e (1 + gamma_{d+12}) mean|g xhat|        (dx_proj_abs)
//           + e^2 (1 + gamma_{d+12}) mean|g|           (dx_mean_g)
// dgamma_j = sum_rows fl(dy h_j): each term dy (xhat + e_m)(1 + theta_4), the
// row sum adds rows - 1 factors: gamma_{rows+3} sum|dy xhat| + e (1 +
// gamma_{rows+3}) sum|dy|. dbeta is a sequential sum: gamma_{rows-1} sum|dy|.
//
// Gradual underflow (only when c.r is known): a product or quotient that
// lands below 0x1p-126 is off by up to 0x1p-150 absolute (sums are exact
// there). In dx / r that is at most 3 units from g_i and mg, (2 + H) H from
// mp times h_i (|h_i| <= H = (X + e)(1 + gamma_3), X the largest |xhat|), one
// from h_i mp and one from the difference; plus one unit for the final product.
// X <= sqrt(d - 1) (the biased variance bounds each deviation) and
// X <= kappa + max_kappa. An underflowed h_j adds 0x1p-150 |g_j| and
// 0x1p-150 |mp| terms: 2 (1 + gamma_{d+12}) 0x1p-150 on the scale terms.
// dgamma gets rows units from the products and 0x1p-150 sum|dy| from h.
Bound twopass_layernorm_bwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double tiny = 0x1p-150;
  const double d = static_cast<double>(c.d);
  const double rows = static_cast<double>(c.rows);
  const double e = u * c.kappa + tiny * c.r;
  const double g_long = gamma_n(d + 12);
  const double g_rows = gamma_n(rows + 3);
  const double max_xhat = std::min(std::sqrt(std::max(d - 1, 0.0)), c.kappa + c.max_kappa);
  const double max_h = (max_xhat + e) * (1 + gamma_n(3));
  const double underflow_scale = 2 * (1 + g_long) * tiny;

  Bound b;
  b.dx_g = gamma_n(5);
  b.dx_mean_g = gamma_n(d + 5) + e * e * (1 + g_long) + e * underflow_scale;
  b.dx_xhat_mean_g = e * (1 + g_long) + underflow_scale;
  b.dx_proj_abs = e * (1 + g_long) + underflow_scale;
  b.dx_proj_rel = g_long;
  b.dgamma_rel = g_rows;
  b.dgamma_abs = (1 + g_rows) * (e + tiny);
  b.dbeta_rel = gamma_n(rows - 1);
  const double dx_underflow = tiny * (1 + c.r * (1 + g_long) * (5 + max_h * (2 + max_h)));
  const double dgamma_underflow = tiny * rows * (1 + g_rows);
  b.underflow_abs = std::max(dx_underflow, dgamma_underflow);
  return b;
}

extern const Kernel kLayerNormBwdTwopass;
constinit const Kernel kLayerNormBwdTwopass = scalar::twopass_backward_row<scalar::Projection::centred>(
    "layernorm_bwd.twopass", Origin::ours,
    "saved mean/rstd; pass 1: xhat = (x - mean)*rstd, row means of g = gamma*dy "
    "and g*xhat; pass 2: dx = rstd*((g - mean(g)) - xhat*mean(g*xhat)); "
    "dgamma, dbeta summed in row order");

}  // namespace normcheck
