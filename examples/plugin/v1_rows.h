/* What the version-1 example plugins share (example_norms.c and its broken
 * twins, broken/broken.c): the row-NaN convention's helpers (docs/semantics.md:
 * a row with a NaN or an infinity in its input gets NaN outputs) and the steps
 * of the two-pass LayerNorm rows, so that a twin differs from the example in
 * its defect alone. Every operation in float, sums left to right. */
#ifndef NORMCHECK_EXAMPLE_V1_ROWS_H
#define NORMCHECK_EXAMPLE_V1_ROWS_H

#include <math.h>
#include <stdint.h>

static inline int v1_row_finite(const float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static inline void v1_fill_nan(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = NAN;
}

/* ---- The forward: mean = sum(x)/d; var = sum((x - mean)^2)/d;
   rstd = 1/sqrt(var + eps); y = (x - mean) * rstd * gamma + beta ---- */

static inline float v1_row_sum(const float* xr, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += xr[i];
  return sum;
}

/* sum((x - mu)^2), the two-pass variance times d. */
static inline float v1_centred_squares(const float* xr, int64_t cols, float mu) {
  float squares = 0.0f;
  for (int64_t i = 0; i < cols; ++i) {
    const float c = xr[i] - mu;
    squares += c * c;
  }
  return squares;
}

/* y_i = (x_i - mu) a gamma_i + beta_i; gamma and beta may be NULL. */
static inline void v1_write_normalized(const float* xr, const float* gamma, const float* beta, float* yr,
                                       int64_t cols, float mu, float a) {
  for (int64_t i = 0; i < cols; ++i) {
    const float xhat = (xr[i] - mu) * a;
    const float scaled = gamma ? gamma[i] * xhat : xhat;
    yr[i] = beta ? scaled + beta[i] : scaled;
  }
}

/* ---- The backward from the saved mean m and rstd a: g = gamma dy,
   xhat = (x - m) a; dx = a ((g - mean(g)) - xhat mean(g xhat)) ---- */

/* Zeroes dgamma and dbeta (either may be NULL), which the rows then add to in order. */
static inline void v1_zero_column_sums(float* dgamma, float* dbeta, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    if (dgamma) dgamma[j] = 0.0f;
    if (dbeta) dbeta[j] = 0.0f;
  }
}

/* The backward's first pass over a row: the sums of g and of g xhat, and the
   row's terms dy xhat and dy added to dgamma and dbeta. */
static inline void v1_layernorm_bwd_sums(const float* xr, const float* dyr, const float* gamma, float m, float a,
                                         int64_t cols, float* dgamma, float* dbeta, float* sum_g,
                                         float* sum_g_xhat) {
  float g_total = 0.0f, g_xhat_total = 0.0f;
  for (int64_t j = 0; j < cols; ++j) {
    const float xhat = (xr[j] - m) * a;
    const float g = gamma ? gamma[j] * dyr[j] : dyr[j];
    g_total += g;
    g_xhat_total += g * xhat;
    if (dgamma) dgamma[j] += dyr[j] * xhat;
    if (dbeta) dbeta[j] += dyr[j];
  }
  *sum_g = g_total;
  *sum_g_xhat = g_xhat_total;
}

#endif /* NORMCHECK_EXAMPLE_V1_ROWS_H */
