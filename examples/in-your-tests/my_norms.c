#include "my_norms.h"

#include <math.h>

/* mean = sum(x)/d; var = sum((x - mean)^2)/d; rstd = 1/sqrt(var + eps);
   y = (x - mean) * rstd * gamma + beta, every sum left to right. */
void my_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                      float* rstd, int64_t rows, int64_t cols, float eps) {
  const float d = (float)cols;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (int64_t i = 0; i < cols; ++i) sum += xr[i];
    const float mu = sum / d;
    float squares = 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      const float c = xr[i] - mu;
      squares += c * c;
    }
    const float a = 1.0f / sqrtf(squares / d + eps);
    for (int64_t i = 0; i < cols; ++i) {
      const float xhat = (xr[i] - mu) * a;
      const float scaled = gamma ? gamma[i] * xhat : xhat;
      y[r * cols + i] = beta ? scaled + beta[i] : scaled;
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}

/* The deliberate defect: var = E[x^2] - E[x]^2 in float cancels catastrophically
   when |mean| >> sigma (and may even come out negative). */
void my_layernorm_fwd_onepass(const float* x, const float* gamma, const float* beta, float* y,
                              float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  const float d = (float)cols;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0.0f, sum_sq = 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      sum += xr[i];
      sum_sq += xr[i] * xr[i];
    }
    const float mu = sum / d;
    const float var = fmaxf(sum_sq / d - mu * mu, 0.0f);
    const float a = 1.0f / sqrtf(var + eps);
    for (int64_t i = 0; i < cols; ++i) {
      const float xhat = (xr[i] - mu) * a;
      const float scaled = gamma ? gamma[i] * xhat : xhat;
      y[r * cols + i] = beta ? scaled + beta[i] : scaled;
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}
