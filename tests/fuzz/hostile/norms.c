/* The correct kernels every hostile plugin carries: a two-pass float32
 * LayerNorm forward and an RMSNorm forward, each sum taken left to right, so
 * both meet the default bound (docs/plugins.md, "What a plugin is held to").
 * Whatever a plugin does wrong comes from hostile.h's hooks alone, which
 * behaviours.c fills in for one behaviour per build.
 *
 * HOSTILE_NAME (a string) prefixes the kernel names, so that plugins can be
 * loaded side by side: "<HOSTILE_NAME>.layernorm_fwd", "<...>.rmsnorm_fwd". */
#include <math.h>
#include <stddef.h>

#include <normcheck/plugin.h>

#include "hostile.h"

#ifndef HOSTILE_NAME
#error "define HOSTILE_NAME, the prefix of this plugin's kernel names"
#endif

/* One row: mu = sum(x)/d, then var = sum((x - mu)^2)/d from the deviations,
   so that a large common offset cancels exactly before anything is squared. */
static void layernorm_row(const float* x, const float* gamma, const float* beta, float* y, int64_t d, float eps,
                          float* mean_out, float* rstd_out) {
  float total = 0.0f;
  for (int64_t j = 0; j < d; ++j) total += x[j];
  const float mu = total / (float)d;
  float deviations = 0.0f;
  for (int64_t j = 0; j < d; ++j) {
    const float dev = x[j] - mu;
    deviations += dev * dev;
  }
  const float inv = 1.0f / sqrtf(deviations / (float)d + eps);
  for (int64_t j = 0; j < d; ++j) {
    float v = (x[j] - mu) * inv;
    if (gamma) v = gamma[j] * v;
    if (beta) v = v + beta[j];
    y[j] = v;
  }
  if (mean_out) *mean_out = mu;
  if (rstd_out) *rstd_out = inv;
}

static void layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r)
    layernorm_row(x + r * cols, gamma, beta, y + r * cols, cols, eps, mean ? mean + r : NULL,
                  rstd ? rstd + r : NULL);
  hostile_on_call(y, rows * cols);
}

/* One row, returning its rrms. A non-finite input gives NaN throughout
   (docs/semantics.md). Otherwise the row is scaled by 2^-k (exact) with 2^k
   near its largest magnitude (or sqrt(eps), if larger), so that the squares
   neither overflow nor vanish; eps is scaled by 2^-2k to match. */
static float rmsnorm_row(const float* x, const float* gamma, float* y, int64_t d, float eps) {
  float largest = 0.0f;
  for (int64_t j = 0; j < d; ++j) {
    if (!isfinite(x[j])) {
      for (int64_t i = 0; i < d; ++i) y[i] = NAN;
      return NAN;
    }
    largest = fmaxf(largest, fabsf(x[j]));
  }
  const float scale_ref = fmaxf(largest, sqrtf(eps));
  const int k = scale_ref > 0.0f ? ilogbf(scale_ref) : 0;
  float squares = 0.0f;
  for (int64_t j = 0; j < d; ++j) {
    const float z = ldexpf(x[j], -k);
    squares += z * z;
  }
  const float inv_scaled = 1.0f / sqrtf(squares / (float)d + ldexpf(eps, -2 * k));
  for (int64_t j = 0; j < d; ++j) {
    const float v = ldexpf(x[j], -k) * inv_scaled;
    y[j] = gamma ? gamma[j] * v : v;
  }
  return ldexpf(inv_scaled, -k);
}

static void rmsnorm_fwd(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                        float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float s = rmsnorm_row(x + r * cols, gamma, y + r * cols, cols, eps);
    if (rrms) rrms[r] = s;
  }
  hostile_on_call(y, rows * cols);
}

static const nc_kernel kHostileKernels[] = {
    {HOSTILE_NAME ".layernorm_fwd", NC_LAYERNORM_FWD, (void (*)(void))layernorm_fwd},
    {HOSTILE_NAME ".rmsnorm_fwd", NC_RMSNORM_FWD, (void (*)(void))rmsnorm_fwd},
};

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }

const nc_kernel* normcheck_plugin_kernels(int* n) {
  static int calls = 0;
  *n = (int)(sizeof kHostileKernels / sizeof kHostileKernels[0]);
  hostile_on_list(++calls, n);
  return kHostileKernels;
}
