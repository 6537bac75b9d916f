/* A plugin with one float32 RMSNorm forward, built in four variants to show
 * what a declared domain (normcheck_plugin_domain, docs/plugins.md) changes:
 *
 *   DOMAIN_FTZ      the kernel flushes a square below FLT_MIN to 0, as a
 *                   kernel run with flush-to-zero does: at eps = 0 a row of
 *                   tiny x (|x| < 2^-63) has q = 0 and rrms = +inf where the
 *                   exact rrms is finite. With eps >= 1e-6, q >= 1e-6 and the
 *                   flushed squares (< 2^-126 each, d of them) are below
 *                   d 2^-126 / 1e-6 ~ d 2^-106 of it: within the default bound.
 *   DOMAIN_EPS_OUTSIDE_ROOT  rrms = 1/(rms + eps) instead of 1/sqrt(ms + eps):
 *                   wrong by about eps/rms wherever eps is not negligible, at
 *                   eps >= 1e-6 too (the broken kernel of
 *                   tests/kernels/test_default_bound.cpp, RmsNormEpsOutsideTheRootFails).
 *   DOMAIN_TEXT     the text normcheck_plugin_domain returns for the kernel
 *                   (the symbol is exported only when it is defined).
 *
 * The kernel's name is DOMAIN_NAME ".rmsnorm_fwd". */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <normcheck/plugin.h>

#ifndef DOMAIN_NAME
#error "define DOMAIN_NAME, the prefix of the kernel's name"
#endif

static void rmsnorm_fwd(const float* x, const float* gamma, float* y, float* rrms, int64_t rows, int64_t cols,
                        float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      float square = xr[j] * xr[j];
#ifdef DOMAIN_FTZ
      if (square < FLT_MIN) square = 0.0f;
#endif
      sum += square;
    }
    const float ms = sum / (float)cols;
#ifdef DOMAIN_EPS_OUTSIDE_ROOT
    const float inv = 1.0f / (sqrtf(ms) + eps);
#else
    const float inv = 1.0f / sqrtf(ms + eps);
#endif
    for (int64_t j = 0; j < cols; ++j) {
      const float v = xr[j] * inv;
      y[r * cols + j] = gamma ? v * gamma[j] : v;
    }
    if (rrms) rrms[r] = inv;
  }
}

static const nc_kernel kKernels[] = {{DOMAIN_NAME ".rmsnorm_fwd", NC_RMSNORM_FWD, (void (*)(void))&rmsnorm_fwd}};

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }

const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = 1;
  return kKernels;
}

#ifdef DOMAIN_TEXT
const char* normcheck_plugin_domain(const char* kernel_name) {
  return strcmp(kernel_name, DOMAIN_NAME ".rmsnorm_fwd") == 0 ? DOMAIN_TEXT : NULL;
}
#endif
