/* normcheck plugin ABI (contract: see docs/plugins.md).
 *
 * A user builds a shared library from their kernel and hands it to
 * `normcheck fuzz --plugin PATH` or `normcheck check --plugin PATH`.
 * Plain C so that any toolchain can produce it. */
#ifndef NORMCHECK_PLUGIN_H
#define NORMCHECK_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NORMCHECK_ABI_VERSION 1

typedef enum { NC_LAYERNORM_FWD = 1, NC_LAYERNORM_BWD = 2, NC_RMSNORM_FWD = 3 } nc_op;

/* Row-major, contiguous, rows x cols. gamma/beta may be NULL (no affine).
   mean/rstd (and rrms) are outputs that may be NULL when not wanted. */
typedef void (*nc_layernorm_fwd_fn)(const float* x, const float* gamma, const float* beta,
                                    float* y, float* mean, float* rstd,
                                    int64_t rows, int64_t cols, float eps);
/* mean and rstd are the forward's saved statistics; dgamma/dbeta are sums over rows
   and may be NULL. */
typedef void (*nc_layernorm_bwd_fn)(const float* dy, const float* x, const float* gamma,
                                    const float* mean, const float* rstd,
                                    float* dx, float* dgamma, float* dbeta,
                                    int64_t rows, int64_t cols);
typedef void (*nc_rmsnorm_fwd_fn)(const float* x, const float* gamma, float* y,
                                  float* rrms, int64_t rows, int64_t cols, float eps);

typedef struct {
  const char* name;
  nc_op op;
  void (*fn)(void);
} nc_kernel;

/* The plugin exports these two symbols. */
typedef int (*normcheck_plugin_abi_fn)(void);                 /* returns NORMCHECK_ABI_VERSION */
typedef const nc_kernel* (*normcheck_plugin_kernels_fn)(int* n); /* its kernels, n set to the count */

#ifdef __cplusplus
}
#endif

#endif /* NORMCHECK_PLUGIN_H */
