// LayerNorm forward, two-pass: the mean first, then the variance of x - mean.
#include <cmath>
#include <cstdint>

#include "bound_blocks.h"
#include "normcheck/kernel.h"
#include "forward_rows.h"

namespace normcheck {

// Error bound of the two-pass algorithm below (docs/accuracy.md, "Two-pass").
// With u = 2^-24, s = eps r^2, kappa = mean|x| r:
//   mean:  |mu^ - mu| <= gamma_d mean|x| + 2^-150        (d - 1 additions, one division)
//          so every xhat is shifted by Delta = gamma_d kappa + 2^-150 r;
//   var:   mean_i (x_i - mu^)^2 = sigma^2 + delta^2 exactly, each term of the
//          computed sum carries 3 + (d - 1) + 1 roundings, and + eps one more:
//          w^ in (sigma^2 + eps)[1 - (1-s) g - ..., 1 + (1-s) g + Delta^2 (1 + g) + ...]
//          with g = gamma_{d+3} (twopass_moments_error, k = 1);
//   rstd:  r^ = fl(1 / fl(sqrt(w^))), two roundings (rstd_error);
//   y:     xhat^ = fl(fl(x - mu^) * r^), y^ = fl(fl(gamma xhat^) + beta)
//          (subtract_then_scale_bound, no extra product):
//          |y^ - y| <= |gamma| (xhat_abs + xhat_rel |xhat|) + u (|gamma xhat| + |beta|)
//          with xhat_abs ~ Delta and xhat_rel ~ 4u + (d + 7) u / 2 (the rstd error).
// "/ d" is one rounding while d is a float; above 2^24, converting d rounds too.
Bound twopass_layernorm_fwd_bound(const RowCondition& c) {
  const int scale_roundings = c.d > (int64_t{1} << 24) ? 2 : 1;
  const MomentsError m = twopass_moments_error(c, scale_roundings);
  return subtract_then_scale_bound(m, rstd_error(m.var_eps, 2, c), 0);
}

namespace {

void twopass_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                 float* rstd, int64_t rows, int64_t cols, float eps) {
  const float d = static_cast<float>(cols);
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const float mu = scalar::row_mean(xr, cols);
    const float r = 1.0f / std::sqrt(scalar::centred_squares(xr, cols, mu) / d + eps);
    scalar::write_normalized_row(xr, gamma, beta, yr, cols, mu, r);
    if (mean) mean[row] = mu;
    if (rstd) rstd[row] = r;
  }
}

}  // namespace

extern const Kernel kLayerNormFwdTwopass;
constinit const Kernel kLayerNormFwdTwopass = {
    .name = "layernorm_fwd.twopass",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "sum/d; sum (x - mean)^2 / d; 1/sqrt(var + eps); (x - mean) * rstd * gamma + beta",
    .fn = &twopass_fwd,
    .bound = &twopass_layernorm_fwd_bound,
    // sum (x - mean)^2 <= d (2 max|x|)^2 must stay below FLT_MAX.
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
};

}  // namespace normcheck
