/* Broken plugins: the example's two-pass LayerNorm (the steps of v1_rows.h)
 * with one deliberate defect, chosen by a BROKEN_<DEFECT> macro (CMakeLists.txt
 * builds one library per defect). normcheck's tests fuzz each and expect the
 * label in the comment. */
#include <math.h>
#include <signal.h>
#include <stddef.h>

#include <normcheck/plugin.h>

#include "../v1_rows.h"

static void layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                          float* rstd, int64_t rows, int64_t cols, float eps) {
#if BROKEN_CRASH_ON_SHAPE /* crash: odd rows of more than 100 columns dereference NULL */
  if (cols > 100 && cols % 2 == 1) *(volatile int*)NULL = 1;
#endif
#if BROKEN_HANG /* hang: rows of a multiple of 5 columns never finish */
  if (cols % 5 == 0) {
    volatile int forever = 1;
    while (forever) {
    }
  }
#endif
  const float d = (float)cols;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
#if BROKEN_UNWRITTEN_ROW /* unwritten_output: the last row of a multi-row problem is skipped */
    if (rows > 1 && r == rows - 1) break;
#endif
    int64_t summed = cols;
#if BROKEN_TAIL_BUG /* accuracy: the mean only sums whole blocks of 8, dropping the tail */
    summed = cols >= 8 ? cols / 8 * 8 : cols;
#endif
    float sum = v1_row_sum(xr, summed);
#if BROKEN_BATCH_VARIANT /* batch_variant: in a batch of rows the mean is summed in two halves, a reduction
                            split that switches with the row count (the row alone is summed left to right) */
    if (rows > 1) sum = v1_row_sum(xr, cols / 2) + v1_row_sum(xr + cols / 2, cols - cols / 2);
#endif
    const float mu = sum / d;
    const float squares = v1_centred_squares(xr, cols, mu);
    float var = squares / d;
#if BROKEN_WRONG_VARIANCE /* accuracy: the unbiased variance, divided by d - 1 */
    if (cols > 1) var = squares / (d - 1.0f);
#endif
#if BROKEN_ONEPASS_VARIANCE /* accuracy and nan: the one-pass variance E[x^2] - mean^2, which cancels */
    float sum_squares = 0.0f;
    for (int64_t i = 0; i < cols; ++i) sum_squares += xr[i] * xr[i];
    var = sum_squares / d - mu * mu;
#endif
    const float a = 1.0f / sqrtf(var + eps);
    v1_write_normalized(xr, gamma, beta, yr, cols, mu, a);
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
#if BROKEN_WRONG_STATISTICS /* accuracy: y is right, the saved rstd is sqrt(var + eps), not its reciprocal */
    if (rstd) rstd[r] = sqrtf(var + eps);
#endif
  }
#if BROKEN_OOB_WRITE /* out_of_bounds: one element written past the end of y */
  y[rows * cols] = 0.0f;
#endif
#if BROKEN_NONDETERMINISTIC /* nondeterministic: every other call moves y[0] by one ulp */
  static int calls = 0;
  if (calls++ % 2 == 1) y[0] = nextafterf(y[0], INFINITY);
#endif
#if BROKEN_WRITES_INPUT /* writes_input: x[0] is used as scratch and not restored */
  ((float*)x)[0] = y[0];
#endif
}

#if BROKEN_BWD_WRONG_PROJECTION || BROKEN_BWD_SKIPS_DBETA
/* accuracy (backward, BWD_WRONG_PROJECTION): dx = rstd (g - mean(g)), the projection
   on xhat forgotten. unwritten_output (BWD_SKIPS_DBETA): the projection is right but
   dbeta is never written. */
static void layernorm_bwd(const float* dy, const float* x, const float* gamma, const float* mean,
                          const float* rstd, float* dx, float* dgamma, float* dbeta, int64_t rows,
                          int64_t cols) {
  const float d = (float)cols;
#if BROKEN_BWD_SKIPS_DBETA
  dbeta = NULL;
#endif
  v1_zero_column_sums(dgamma, dbeta, cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    const float* dyr = dy + r * cols;
    float* dxr = dx + r * cols;
    float sum_g, sum_g_xhat;
    v1_layernorm_bwd_sums(xr, dyr, gamma, mean[r], rstd[r], cols, dgamma, dbeta, &sum_g, &sum_g_xhat);
    const int finite = v1_row_finite(xr, cols) && v1_row_finite(dyr, cols);
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = (xr[j] - mean[r]) * rstd[r];
      const float g = gamma ? gamma[j] * dyr[j] : dyr[j];
#if BROKEN_BWD_WRONG_PROJECTION
      (void)xhat, (void)sum_g_xhat, (void)finite;
      dxr[j] = rstd[r] * (g - sum_g / d);
#else
      dxr[j] = finite ? rstd[r] * ((g - sum_g / d) - xhat * (sum_g_xhat / d)) : NAN;
#endif
    }
  }
}
#if BROKEN_BWD_WRONG_PROJECTION
static const nc_kernel kKernels[] = {{"broken.bwd_wrong_projection", NC_LAYERNORM_BWD, (void (*)(void))layernorm_bwd}};
#else
static const nc_kernel kKernels[] = {{"broken.bwd_skips_dbeta", NC_LAYERNORM_BWD, (void (*)(void))layernorm_bwd}};
#endif
#else
#if BROKEN_WRONG_STATISTICS
#define NAME "broken.wrong_statistics"
#elif BROKEN_TAIL_BUG
#define NAME "broken.tail_bug"
#elif BROKEN_WRONG_VARIANCE
#define NAME "broken.wrong_variance"
#elif BROKEN_ONEPASS_VARIANCE
#define NAME "broken.onepass_variance"
#elif BROKEN_OOB_WRITE
#define NAME "broken.oob_write"
#elif BROKEN_UNWRITTEN_ROW
#define NAME "broken.unwritten_row"
#elif BROKEN_CRASH_ON_SHAPE
#define NAME "broken.crash_on_shape"
#elif BROKEN_HANG
#define NAME "broken.hang"
#elif BROKEN_NONDETERMINISTIC
#define NAME "broken.nondeterministic"
#elif BROKEN_WRITES_INPUT
#define NAME "broken.writes_input"
#elif BROKEN_BATCH_VARIANT
#define NAME "broken.batch_variant"
#endif
static const nc_kernel kKernels[] = {{NAME, NC_LAYERNORM_FWD, (void (*)(void))layernorm_fwd}};
#endif

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }

const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = 1;
  return kKernels;
}
