// LayerNorm forward, naive one pass: var = E[x^2] - E[x]^2. Kept as the
// known-bad control.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "bound_blocks.h"
#include "normcheck/kernel.h"
#include "forward_rows.h"

namespace normcheck {

// What this algorithm would have to declare (docs/accuracy.md, "Naive one pass").
// With kappa = mean|x| r, s = eps r^2, Delta = gamma_d kappa + 2^-150 r (the mean's
// error in r units, as in two-pass) and mean(x^2) r^2 = (1 - s) + (mu r)^2 <= (1 - s) + kappa^2:
//   m2^ = mean(x^2)(1 + theta_{d+1}) + eta         (squares, d - 1 additions, / d)
//   p^  = fl(mu^ * mu^),  |mu^2 - mu^2| r^2 = |delta r| |2 mu r + delta r| <= Delta (2 kappa + Delta)
//   var^ = max(fl(m2^ - p^), 0):
//   |fl(m2^ - p^) r^2 - (1 - s)| <= lambda = (1 + u) lambda0 + u (1 - s),
//   lambda0 = gamma_{d+1}((1 - s) + kappa^2) + Delta (2 kappa + Delta) + u (kappa + Delta)^2
//             + 2^-148 (1 + gamma_d) r^2.
// The E[x]^2 it subtracts is kappa^2 times the variance: the error is
// ~ 3 d u kappa^2 relative, against two-pass's (d + 3) u + Delta^2 = (d + 3) u + (d u kappa)^2.
// At d = 1024 and kappa = 1e4 (x = 1e4 + N(0, 1)) lambda exceeds 1: the computed
// variance is noise, and the clamp at 0 (which keeps constant rows free of NaN
// when eps > 0) is all that keeps rstd finite.
Bound naive_onepass_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  const double d = static_cast<double>(c.d);
  const double sigma_share = 1 - c.eps_share;
  MomentsError m;
  m.mean_rel = gamma_n(d);
  m.mean_underflow = kUnderflowUnit;
  m.mean_r = m.mean_rel * c.kappa + kUnderflowUnit * c.r;
  const double lambda0 = gamma_n(d + 1) * (sigma_share + c.kappa * c.kappa) +
                         m.mean_r * (2 * c.kappa + m.mean_r) +
                         u * (c.kappa + m.mean_r) * (c.kappa + m.mean_r) +
                         0x1p-148 * (1 + gamma_n(d)) * c.r * c.r;
  const double lambda = (1 + u) * lambda0 + u * sigma_share;
  const double var_low = std::max(0.0, sigma_share - lambda);  // the clamp at 0
  m.var_eps = {1 - (var_low + c.eps_share) * (1 - u), (1 + lambda) * (1 + u) - 1};
  return subtract_then_scale_bound(m, rstd_error(m.var_eps, 2, c), 0);
}

namespace {

void naive_onepass_fwd(const float* x, const float* gamma, const float* beta, float* y,
                       float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  const float d = static_cast<float>(cols);
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float sum = 0.0f, sum_squares = 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      sum += xr[i];
      sum_squares += xr[i] * xr[i];
    }
    const float mu = sum / d;
    const float variance = std::max(sum_squares / d - mu * mu, 0.0f);
    const float r = 1.0f / std::sqrt(variance + eps);
    scalar::write_normalized_row(xr, gamma, beta, yr, cols, mu, r);
    if (mean) mean[row] = mu;
    if (rstd) rstd[row] = r;
  }
}

}  // namespace

// The control claims to be an ordinary LayerNorm kernel: it declares the
// default bound (what any correct two-pass kernel meets), not the kappa^2 bound
// above that its algorithm needs. Rows with |mu| >> sigma therefore make it
// fail its declared bound, which is what shows the checks catch a bad kernel;
// tests/kernels/test_layernorm_fwd_shifted.cpp asserts both sides (it fails
// the default bound and stays within naive_onepass_layernorm_fwd_bound).
extern const Kernel kLayerNormFwdNaiveOnepass;
constinit const Kernel kLayerNormFwdNaiveOnepass = {
    .name = "layernorm_fwd.naive_onepass",
    .op = Op::layernorm_fwd,
    .origin = Origin::control,
    .dtype = DType::f32,
    .algorithm = "var = sum(x^2)/d - mean^2 (clamped at 0) in one pass; (x - mean) * rstd * gamma + beta",
    .fn = &naive_onepass_fwd,
    .bound = &default_layernorm_fwd_bound,  // = default_bound(Op::layernorm_fwd)
    // sum x^2 <= d max|x|^2 must stay below FLT_MAX.
    .range = {.max_abs_x = 0x1p63, .sqrt_d_scaled = true},
};

}  // namespace normcheck
