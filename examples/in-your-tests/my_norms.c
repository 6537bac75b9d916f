#include "my_norms.h"

#include <math.h>

/* The variance of a row about its mean mu, as sum / d. */
typedef float (*variance_fn)(const float* xr, int64_t cols, float mu);

/* sum((x - mean)^2)/d, left to right. */
static float two_pass_variance(const float* xr, int64_t cols, float mu) {
  float squares = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    const float c = xr[i] - mu;
    squares += c * c;
  }
  return squares / (float)cols;
}

/* The deliberate defect: var = E[x^2] - E[x]^2 in float cancels catastrophically
   when |mean| >> sigma (and may even come out negative). */
static float one_pass_variance(const float* xr, int64_t cols, float mu) {
  float sum_sq = 0.0f;
  for (int64_t i = 0; i < cols; ++i) sum_sq += xr[i] * xr[i];
  return fmaxf(sum_sq / (float)cols - mu * mu, 0.0f);
}

/* mean = sum(x)/d; var = variance(x, mean); rstd = 1/sqrt(var + eps);
   y = (x - mean) * rstd * gamma + beta, every sum left to right. */
static void layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float eps, variance_fn variance) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (int64_t i = 0; i < cols; ++i) sum += xr[i];
    const float mu = sum / (float)cols;
    const float a = 1.0f / sqrtf(variance(xr, cols, mu) + eps);
    for (int64_t i = 0; i < cols; ++i) {
      const float xhat = (xr[i] - mu) * a;
      const float scaled = gamma ? gamma[i] * xhat : xhat;
      y[r * cols + i] = beta ? scaled + beta[i] : scaled;
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}

void my_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                      float* rstd, int64_t rows, int64_t cols, float eps) {
  layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps, two_pass_variance);
}

void my_layernorm_fwd_onepass(const float* x, const float* gamma, const float* beta, float* y,
                              float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps, one_pass_variance);
}
