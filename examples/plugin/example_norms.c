/* An example normcheck plugin: careful two-pass float32 LayerNorm forward and
 * backward and RMSNorm forward (the version-1 list); RMSNorm backward and a
 * bf16-storage LayerNorm forward (the extension list). docs/plugins.md walks
 * through it. */
#include <math.h>
#include <stddef.h>

#include <normcheck/plugin.h>

#include "v1_rows.h"

/* mean = sum(x)/d; var = sum((x - mean)^2)/d; rstd = 1/sqrt(var + eps);
   y = (x - mean) * rstd * gamma + beta, every sum left to right (v1_rows.h). */
static void layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float eps) {
  const float d = (float)cols;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float mu = v1_row_sum(xr, cols) / d;
    const float a = 1.0f / sqrtf(v1_centred_squares(xr, cols, mu) / d + eps);
    v1_write_normalized(xr, gamma, beta, y + r * cols, cols, mu, a);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}

/* g = gamma dy, xhat = (x - mean) rstd; dx = rstd ((g - mean(g)) - xhat mean(g xhat)).
   With mean NULL it is RMSNorm's: mean 0 and no mean(g) term, rstd the saved rrms. */
static void layernorm_bwd(const float* dy, const float* x, const float* gamma, const float* mean,
                          const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                          int64_t cols) {
  const float d = (float)cols;
  v1_zero_column_sums(dgamma, dbeta, cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    const float m = mean ? mean[r] : 0.0f, a = rstd[r];
    float sum_g, sum_g_xhat;
    v1_layernorm_bwd_sums(xr, dyr, gamma, m, a, cols, dgamma, dbeta, &sum_g, &sum_g_xhat);
    if (!v1_row_finite(xr, cols) || !v1_row_finite(dyr, cols)) { /* NaN in, NaN out */
      v1_fill_nan(dxr, cols);
      continue;
    }
    const float mean_g = mean ? sum_g / d : 0.0f, mean_g_xhat = sum_g_xhat / d;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (xr[j] - m) * a;
      const float g = gamma ? gamma[j] * dyr[j] : dyr[j];
      dxr[j] = a * ((g - mean_g) - xhat * mean_g_xhat);
    }
  }
}

/* The row scaled by 2^-e (exact) so that its squares neither overflow nor
   underflow: rrms = 2^-e / sqrt(sum(z^2)/d + eps 2^-2e), z = x 2^-e. */
static void rmsnorm_fwd(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                        float eps) {
  const float d = (float)cols;
  const float sqrt_eps = sqrtf(eps);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    if (!v1_row_finite(xr, cols)) {
      v1_fill_nan(yr, cols);
      if (rrms) rrms[r] = NAN;
      continue;
    }
    float max_abs = 0.0f;
    for (int64_t j = 0; j < cols; ++j) max_abs = fmaxf(max_abs, fabsf(xr[j]));
    const float ref = fmaxf(max_abs, sqrt_eps);
    const int e = ref > 0.0f ? ilogbf(ref) : 0;
    float sum_sq = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float z = ldexpf(xr[j], -e);
      sum_sq += z * z;
    }
    const float rz = 1.0f / sqrtf(sum_sq / d + ldexpf(eps, -2 * e));
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = ldexpf(xr[j], -e) * rz;
      yr[j] = gamma ? gamma[j] * xhat : xhat;
    }
    if (rrms) rrms[r] = ldexpf(rz, -e);
  }
}

/* xhat = x rrms; dx = rrms (g - xhat mean(g xhat)); dgamma = sum_rows dy xhat. */
static void rmsnorm_bwd(const float* dy, const float* x, const float* gamma, const float* rrms, float* dx,
                        float* dgamma, int64_t rows, int64_t cols) {
  layernorm_bwd(dy, x, gamma, NULL, rrms, dx, dgamma, NULL, rows, cols);
}

/* bf16 storage: x and y hold bf16 bit patterns (the top 16 bits of a float). */
static float float_from_bf16(uint16_t h) {
  union { uint32_t u; float f; } v;
  v.u = (uint32_t)h << 16;
  return v.f;
}

static uint16_t bf16_from_float(float f) { /* round to nearest, ties to even; NaN stays NaN */
  union { uint32_t u; float f; } v;
  v.f = f;
  if (isnan(f)) return (uint16_t)((v.u >> 16) | 0x40);
  return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}

/* The two-pass forward in float on the widened row, y rounded to bf16. */
static void layernorm_fwd_bf16(const uint16_t* x, const float* gamma, const float* beta, uint16_t* y,
                               float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  enum { kChunk = 256 };
  float xs[kChunk], ys[kChunk];
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = x + r * cols;
    const float d = (float)cols;
    float sum = 0.0f;
    for (int64_t i = 0; i < cols; ++i) sum += float_from_bf16(xr[i]);
    const float mu = sum / d;
    float squares = 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      const float c = float_from_bf16(xr[i]) - mu;
      squares += c * c;
    }
    const float a = 1.0f / sqrtf(squares / d + eps);
    for (int64_t i0 = 0; i0 < cols; i0 += kChunk) {
      const int64_t n = cols - i0 < kChunk ? cols - i0 : kChunk;
      for (int64_t i = 0; i < n; ++i) xs[i] = float_from_bf16(xr[i0 + i]);
      for (int64_t i = 0; i < n; ++i) {
        const float xhat = (xs[i] - mu) * a;
        const float scaled = gamma ? gamma[i0 + i] * xhat : xhat;
        ys[i] = beta ? scaled + beta[i0 + i] : scaled;
      }
      for (int64_t i = 0; i < n; ++i) y[r * cols + i0 + i] = bf16_from_float(ys[i]);
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}

static const nc_kernel kKernels[] = {
    {"example.layernorm_fwd", NC_LAYERNORM_FWD, (void (*)(void))layernorm_fwd},
    {"example.layernorm_bwd", NC_LAYERNORM_BWD, (void (*)(void))layernorm_bwd},
    {"example.rmsnorm_fwd", NC_RMSNORM_FWD, (void (*)(void))rmsnorm_fwd},
};

static const nc_kernel_ext kKernelsExt[] = {
    {"example.rmsnorm_bwd", NC_RMSNORM_BWD, NC_F32, (void (*)(void))rmsnorm_bwd},
    {"example.layernorm_fwd_bf16", NC_LAYERNORM_FWD, NC_BF16, (void (*)(void))layernorm_fwd_bf16},
};

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }

const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = (int)(sizeof kKernels / sizeof kKernels[0]);
  return kKernels;
}

const nc_kernel_ext* normcheck_plugin_kernels_ext(int* n) {
  *n = (int)(sizeof kKernelsExt / sizeof kKernelsExt[0]);
  return kKernelsExt;
}
