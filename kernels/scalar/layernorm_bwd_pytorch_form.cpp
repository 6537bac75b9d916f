// LayerNorm backward in PyTorch's form (seed 004, layer_norm_backward_frame):
//   a = rstd, ds = sum dy*gamma*x, db = sum dy*gamma,
//   b = (db*mean - ds) * a*a*a * scale, c = -b*mean - db*a*scale, scale = 1/d,
//   dx = a*dy*gamma + b*x + c,
//   dgamma = sum_rows dy*(a*x + bias), bias = -a*mean,  dbeta = sum_rows dy.
// The projection sum(g (x - mean)) is formed from the raw sums db*mean - ds and
// undone again in b*x + c: both cancel when |mean| >> sigma.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backward_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

// Error bound (docs/accuracy_backward.md, section pytorch_form, has the long form).
//
// Notation as in layernorm_bwd_twopass.cpp: G = mean(g), P = mean(g xhat),
// M_g = mean|g|, M_gx = mean|g xhat|, r^ = r (1 + rho). The saved mean is off by
// |m^ - mu| <= u|mu| + 0x1p-150 (the second term when mu is subnormal), so with
// kappa' = kappa + 0x1p-126 r (kappa when r is not known):
// e = u kappa' >= |e_m| = |mu - m^| r, r|x_i| <= |xhat_i| + kappa and
// r|m^| <= (1 + u) kappa'. The bound below grows with kappa, so it is taken at kappa'.
// 1. db^ = dG + D1, |D1| <= gamma_d d M_g;  ds^ = sum g x + D2,
//    |D2| <= gamma_{d+1} sum|g x| <= gamma_{d+1} (d/r)(M_gx + kappa M_g).
// 2. K^ = fl(fl(db^ m^) - ds^) against K = dG mu - sum g x = -(d/r) P:
//    (r/d)|K^ - K| <= A_k kappa M_g + A_x M_gx with
//      c1  = gamma_d (1+u) + u + u (1+u)(1+gamma_d) + gamma_{d+1}
//      A_k = (1+u) c1,  A_x = (1+u) gamma_{d+1} + u.
//    So K^ = -(d/r)(P + dP), |dP| <= A_k kappa M_g + A_x M_gx.
// 3. b^ = K^ a a a scale (four roundings, scale = fl(1/d), three rho):
//    b^ = -r^2 B, B = P + dB, |dB| <= D_x M_gx + D_k kappa M_g,
//      D_x = gamma_8 + (1 + gamma_8) A_x,  D_k = (1 + gamma_8) A_k.
// 4. c^ = fl(fl(-b^ m^) - fl(fl(db^ a) scale)), dx^ = fl(fl(t_a + fl(b^ x_i)) + c^),
//    t_a = fl(fl(a dy) gamma) = r g_i (1 + theta_3). In dx^ / r:
//      r g_i (1 + theta_5) - (1/d) sum g_j (1 + theta_{d+6})
//      - r B (x_i (1 + theta_3) - m^ (1 + theta_3)),
//    and r B (x_i - m^) = B (xhat_i + e_m). Against dx_i / r = g_i - G - xhat_i P:
//      gamma_5 |g_i| + gamma_{d+6} M_g + |dB| |xhat_i| + |B| e
//      + |B| gamma_3 (|xhat_i| + (2 + u) kappa),   |B| <= (1 + D_x) M_gx + D_k kappa M_g.
//    Collected, with s = e + gamma_3 (2 + u) kappa (the rounding of b x and b mean,
//    each of size u r^2 |P| |x|: the cancellation's cost):
//      dx_g           = gamma_5
//      dx_proj_rel    = D_x + gamma_3 (1 + D_x)
//      dx_xhat_mean_g = D_k kappa (1 + gamma_3)
//      dx_proj_abs    = s (1 + D_x)                    (grows like 7 u kappa)
//      dx_mean_g      = gamma_{d+6} + s D_k kappa      (second order in u kappa)
// 5. dgamma: v = fl(fl(a x) + fl(-a m^)) = (1 + theta_2)[(xhat + e_m) + r x d1 - r m^ d2],
//    |v - xhat| <= gamma_3 |xhat| + (1 + gamma_2)(3 + u) u kappa; times dy and
//    summed over rows (theta_rows): gamma_{rows+3} sum|dy xhat|
//    + (1 + gamma_rows)(1 + gamma_2)(3 + u) u kappa sum|dy|. dbeta: gamma_{rows-1}.
// 6. Gradual underflow (0x1p-150 absolute per product or quotient below 0x1p-126),
//    only when c.r is known: K^ gains at most Kab = 0x1p-150 (1 + gamma_d)
//    (d (max_kappa + (1 + u) kappa)/r + d + 1); b^ gains
//    Bab = (1 + gamma_8) (Kab r^3 / d + 0x1p-150 (r^2/d + r/d + 1/d + 1)), and dx
//    gains Bab (max_kappa + (1 + u) kappa)/r from b x and b mean, plus
//    0x1p-150 (r (1 + gamma_d) + 5) from db a scale and the last roundings, all
//    times (1 + gamma_3); fl(a dy) underflowing costs 0x1p-150 before the product
//    by gamma_i: 0x1p-150 max|gamma| (1 + gamma_3) more. b^ = -r^2 P underflows
//    outright once r^2 < 2^-126 (sigma above ~2^63): the 1/r in Bab's term shows
//    the error that costs.
// 7. Overflow: the bound above assumes no operation overflows. Where the form's
//    intermediates can overflow while the exact gradient does not, it promises
//    nothing (+inf coefficients). An operation whose exact result on its
//    computed operands is at most FLT_MAX in magnitude rounds to at most FLT_MAX
//    (rounding is monotone), and each rounding grows a magnitude by at most
//    (1 + u), so with Gm = max|g|, Dm = max|dy|, X = max|x| = max_kappa / r,
//    |m^| <= X (mu, hence fl(mu), lies between the row's smallest and largest x),
//    H = max|xhat| <= min(sqrt(d - 1), kappa + max_kappa), the computed values are
//    at most (each (1 + u)^k <= 1 + gamma_k, whose slack over (1 + u)^k - 1,
//    > u^2 = 2^-48, covers the few 2^-53 of evaluating these in double):
//      db and its partial sums, fl(db a)    (1 + gamma_{d+2}) d Gm max(1, r)
//      fl(g x), ds's partial sums, fl(db m^) (1 + gamma_{d+1}) d Gm X
//      K^  <= K = min(2 (1 + gamma_{d+2}) d Gm X,          (the two raw sums)
//                     (d/r) Gm ((1 + A_x) H + A_k kappa) + Kab)  (step 2: |P| <= Gm H)
//      K^ a, K^ a a, K^ a a a               (1 + gamma_6) K max(1, r, r^3)
//      b^ <= B = (1 + gamma_8) r^3 K / d,  fl(a dy) <= (1 + gamma_2) r Dm
//      c^, fl(b^ x), t_a, and dx's two sums  (1 + gamma_{d+6}) 2 (r Gm + B X)
//    (c^ <= (1 + gamma_{d+5})(B X + r Gm)). dx promises something only if all of
//    these are <= FLT_MAX. That is what x = [0x1p+123], gamma = [0x1p+5], dy = [1]
//    (d Gm X = 2^128: ds overflows) and x = [0 0x1p-62], dy = [0 4], eps = 0
//    (r = 2^63, K = 2^-61, K a a a = 2^128) break. dgamma's terms are
//    fl(a x) <= (1 + gamma_2) max_kappa, fl(-a m^) <= (1 + gamma_3) kappa',
//    v <= (1 + gamma_3)(max_kappa + kappa'), and the column sums
//    <= (1 + gamma_{rows+5}) rows Dm (max_kappa + kappa') (a constant row
//    |x| = 2^110 with eps = 1e-12 has r x = 2^130: a x overflows and v is NaN);
//    dbeta's column sums <= (1 + gamma_rows) rows Dm. Without the magnitudes
//    (c.r, c.max_abs_g, c.max_abs_dy 0: not known) nothing is taken to overflow.
Bound pytorch_form_layernorm_bwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double tiny = 0x1p-150;
  constexpr double float_max = 0x1.fffffep127;
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double d = static_cast<double>(c.d);
  const double rows = static_cast<double>(c.rows);
  const double kappa = c.kappa + 0x1p-126 * c.r;  // kappa': the subnormal mean's 0x1p-150
  const double g3 = gamma_n(3), g8 = gamma_n(8), gd = gamma_n(d), gd1 = gamma_n(d + 1);
  const double c1 = gd * (1 + u) + u + u * (1 + u) * (1 + gd) + gd1;
  const double a_kappa = (1 + u) * c1;
  const double a_x = (1 + u) * gd1 + u;
  const double d_x = g8 + (1 + g8) * a_x;
  const double d_kappa = (1 + g8) * a_kappa;
  const double shift = u * kappa + g3 * (2 + u) * kappa;

  Bound b;
  b.dx_g = gamma_n(5);
  b.dx_proj_rel = d_x + g3 * (1 + d_x);
  b.dx_xhat_mean_g = d_kappa * kappa * (1 + g3);
  b.dx_proj_abs = shift * (1 + d_x);
  b.dx_mean_g = gamma_n(d + 6) + shift * d_kappa * kappa;
  b.dgamma_rel = gamma_n(rows + 3);
  b.dgamma_abs = (1 + gamma_n(rows)) * (1 + gamma_n(2)) * ((3 + u) * u * kappa + tiny);
  b.dbeta_rel = gamma_n(rows - 1);
  double k_abs = 0;
  if (c.r > 0) {
    const double r = c.r;
    const double x_scale = c.max_kappa + (1 + u) * kappa;  // r (|x_i| + |m^|)
    k_abs = tiny * (1 + gd) * (d * x_scale / r + d + 1);
    const double b_abs =
        (1 + g8) * (k_abs * r * r * r / d + tiny * (r * r / d + r / d + 1 / d + 1));
    const double dx_abs = (1 + g3) * (b_abs * x_scale / r + tiny * (r * (1 + gd) + 5 + c.max_abs_gamma));
    b.underflow_abs = std::max(dx_abs, tiny * rows * (1 + gamma_n(rows + 3)));
  }

  if (c.r > 0) {  // step 7: overflow
    const double r = c.r, gm = c.max_abs_g, dym = c.max_abs_dy;
    const double x_max = c.max_kappa / r;
    const double h_max = std::min(std::sqrt(std::max(d - 1, 0.0)), c.kappa + c.max_kappa);
    const double k_max = std::min(2 * (1 + gamma_n(d + 2)) * d * gm * x_max,
                                  (d / r) * gm * ((1 + a_x) * h_max + a_kappa * kappa) + k_abs);
    const double b_max = (1 + g8) * r * r * r * k_max / d;
    const double dx_largest = std::max(
        {(1 + gamma_n(d + 2)) * d * gm * std::max(1.0, r), (1 + gd1) * d * gm * x_max,
         (1 + gamma_n(6)) * k_max * std::max({1.0, r, r * r * r}), b_max,
         (1 + gamma_n(2)) * r * dym, (1 + gamma_n(d + 6)) * 2 * (r * gm + b_max * x_max)});
    if (!(dx_largest <= float_max))
      b.dx_g = b.dx_mean_g = b.dx_xhat_mean_g = b.dx_proj_abs = b.dx_proj_rel = inf;
    const double v_max = (1 + g3) * (c.max_kappa + kappa);
    if (!(v_max <= float_max && (1 + gamma_n(rows + 5)) * rows * dym * (c.max_kappa + kappa) <= float_max))
      b.dgamma_rel = b.dgamma_abs = inf;
  }
  if (!((1 + gamma_n(rows)) * rows * c.max_abs_dy <= float_max)) b.dbeta_rel = inf;
  return b;
}

void layernorm_bwd_pytorch_form(const float* dy, const float* x, const float* gamma,
                                const float* mean, const float* rstd, float* dx, float* dgamma,
                                float* dbeta, int64_t rows, int64_t cols) {
  const float scale = 1.0f / static_cast<float>(cols);
  const auto row_step = [&](const scalar::BackwardRow& row) {
    const float m = row.mean;
    const float a = row.rstd;
    const float bias = -a * m;
    float ds = 0.0f, db = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float g = gamma ? row.dy[j] * gamma[j] : row.dy[j];
      ds += g * row.x[j];
      db += g;
      if (dgamma) dgamma[j] += row.dy[j] * (a * row.x[j] + bias);
      if (dbeta) dbeta[j] += row.dy[j];
    }
    if (scalar::nan_dx_for_nonfinite_row(row.x, row.dy, row.dx, cols)) return;
    const float b = (db * m - ds) * a * a * a * scale;
    const float c = -b * m - db * a * scale;
    for (int64_t j = 0; j < cols; ++j) {
      const float a_dy_gamma = gamma ? a * row.dy[j] * gamma[j] : a * row.dy[j];
      row.dx[j] = a_dy_gamma + b * row.x[j] + c;
    }
  };
  scalar::for_each_backward_row(dy, x, mean, rstd, dx, dgamma, dbeta, rows, cols, row_step);
}

}  // namespace

// Range: the scalar backwards' (scalar::kBackwardRange). Inside it the form still over- and underflows where the exact gradient does not:
// the bound's step 7 promises nothing on the rows where an intermediate can
// overflow (e.g. b = -rstd^2 P once rstd^2 |P| > FLT_MAX, sigma below ~1e-19),
// and its underflow term grows where b underflows (rstd^2 < 2^-126, sigma above
// ~2^63). No InputRange can say this: x = [0 0x1p-62] is a tiny row, not a large one.
extern const Kernel kLayerNormBwdPytorchForm;
constinit const Kernel kLayerNormBwdPytorchForm = scalar::backward_row(
    "layernorm_bwd.pytorch_form", Op::layernorm_bwd, Origin::ours, &layernorm_bwd_pytorch_form,
    &pytorch_form_layernorm_bwd_bound,
    "seed 004 / PyTorch CPU: ds = sum dy*gamma*x, db = sum dy*gamma, "
    "b = (db*mean - ds)*rstd^3/d, c = -b*mean - db*rstd/d, "
    "dx = rstd*dy*gamma + b*x + c; dgamma = sum dy*(rstd*x - rstd*mean); "
    "no promise on rows where these overflow (e.g. rstd^3*(db*mean - ds))");

}  // namespace normcheck
