// Control: LayerNorm backward whose projection mean(g xhat) comes from one-pass
// raw sums, rstd * (mean(g x) - mean * mean(g)), the backward twin of the
// E[x^2] - E[x]^2 forward. It cancels when |mean| >> sigma: the error in that
// projection grows like gamma_d kappa mean|g|, where the two-pass backward's
// grows like u kappa mean|g|. It is held to the two-pass bound, which it meets
// on centred rows and breaks on shifted ones (x = 1e4 + N(0,1)): kept to show
// that the checks catch it. The bound it would need is pytorch_form's.
#include "backward_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

void layernorm_bwd_naive_onepass(const float* dy, const float* x, const float* gamma,
                                 const float* mean, const float* rstd, float* dx, float* dgamma,
                                 float* dbeta, int64_t rows, int64_t cols) {
  scalar::zero_if_wanted(dgamma, cols);
  scalar::zero_if_wanted(dbeta, cols);
  const float d = static_cast<float>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    const float m = mean[r];
    const float a = rstd[r];
    float sum_g = 0.0f, sum_g_x = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float g = gamma ? gamma[j] * dyr[j] : dyr[j];
      sum_g += g;
      sum_g_x += g * xr[j];
      if (dgamma) dgamma[j] += dyr[j] * ((xr[j] - m) * a);
      if (dbeta) dbeta[j] += dyr[j];
    }
    if (scalar::nan_dx_for_nonfinite_row(xr, dyr, dxr, cols)) continue;
    const float mean_g = sum_g / d;
    const float mean_g_xhat = a * (sum_g_x / d - m * mean_g);
    for (int64_t j = 0; j < cols; ++j) {
      const float g = gamma ? gamma[j] * dyr[j] : dyr[j];
      dxr[j] = a * ((g - mean_g) - ((xr[j] - m) * a) * mean_g_xhat);
    }
  }
}

}  // namespace

extern const Kernel kLayerNormBwdNaiveOnepass;
constinit const Kernel kLayerNormBwdNaiveOnepass{
    .name = "layernorm_bwd.naive_onepass",
    .op = Op::layernorm_bwd,
    .origin = Origin::control,
    .dtype = DType::f32,
    .algorithm = "control: mean(g*xhat) from one-pass raw sums rstd*(mean(g*x) - mean*mean(g)), "
                 "then dx = rstd*((g - mean(g)) - xhat*mean(g*xhat)); held to the two-pass bound",
    .fn = &layernorm_bwd_naive_onepass,
    .bound = &twopass_layernorm_bwd_bound,
    .range = {.max_abs_x = 0x1p124},
};

}  // namespace normcheck
