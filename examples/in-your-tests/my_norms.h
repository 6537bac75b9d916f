/* The kernels of this example project: a careful two-pass LayerNorm forward and
 * a one-pass one (var = E[x^2] - E[x]^2) that loses every digit of the variance
 * on rows whose |mean| is large next to their spread. Both have the plugin
 * ABI's type nc_layernorm_fwd_fn (normcheck/plugin.h). */
#ifndef MY_NORMS_H
#define MY_NORMS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void my_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                      float* rstd, int64_t rows, int64_t cols, float eps);
void my_layernorm_fwd_onepass(const float* x, const float* gamma, const float* beta, float* y,
                              float* mean, float* rstd, int64_t rows, int64_t cols, float eps);

#ifdef __cplusplus
}
#endif

#endif
