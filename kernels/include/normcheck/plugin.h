/* normcheck plugin ABI (contract: see docs/plugins.md).
 *
 * A user builds a shared library from their kernel and hands it to
 * `normcheck fuzz --plugin PATH`, `normcheck check --plugin PATH` or
 * `normcheck list --plugin PATH`. Plain C so that any toolchain can produce it.
 *
 * Version 1 (below, unchanged): float32 LayerNorm forward/backward and RMSNorm
 * forward, listed by normcheck_plugin_kernels(). The extension (further below)
 * adds RMSNorm backward and bf16/f16 storage through one more, optional,
 * symbol; the declared domain (further below) is another optional symbol. A
 * plugin built against the version-1 header loads unchanged.
 * Version 2 (at the end) lists kernels by an op spec and calls them with
 * tensor descriptors: fused residual adds, 1 + gamma weights, rounding
 * policies, mixed formats and row strides, through one more optional symbol. */
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

/* ---- Extension: RMSNorm backward and 16-bit storage (optional) ----
 *
 * A plugin that has such kernels also exports
 *   const nc_kernel_ext* normcheck_plugin_kernels_ext(int* n);
 * Its kernels join those of normcheck_plugin_kernels() (which may then return
 * n = 0; the plugin as a whole must have at least one kernel). A version-1
 * plugin does not export it and loads as before. */

/* The op values of the extension list: nc_op's, plus RMSNorm backward. */
#define NC_RMSNORM_BWD 4

typedef enum { NC_F32 = 0, NC_BF16 = 1, NC_F16 = 2, NC_E4M3 = 3, NC_E5M2 = 4, NC_I8 = 5 } nc_dtype;
/* NC_E4M3 (OCP fp8 e4m3fn), NC_E5M2 (fp8 e5m2) and NC_I8 (int8) are bytes:
   only the y of a version-2 kernel whose spec quantizes it (quant=) has them. */

/* RMSNorm backward: rrms is the forward's saved statistic 1/sqrt(mean(x^2) + eps);
   dgamma is a sum over rows and may be NULL. */
typedef void (*nc_rmsnorm_bwd_fn)(const float* dy, const float* x, const float* gamma,
                                  const float* rrms, float* dx, float* dgamma,
                                  int64_t rows, int64_t cols);

/* 16-bit storage (dtype NC_BF16 or NC_F16): x, y, dy, dx hold the 16-bit bit
   patterns; gamma, beta, the statistics and dgamma/dbeta stay float. */
typedef void (*nc_layernorm_fwd16_fn)(const uint16_t* x, const float* gamma, const float* beta,
                                      uint16_t* y, float* mean, float* rstd,
                                      int64_t rows, int64_t cols, float eps);
typedef void (*nc_layernorm_bwd16_fn)(const uint16_t* dy, const uint16_t* x, const float* gamma,
                                      const float* mean, const float* rstd, uint16_t* dx,
                                      float* dgamma, float* dbeta, int64_t rows, int64_t cols);
typedef void (*nc_rmsnorm_fwd16_fn)(const uint16_t* x, const float* gamma, uint16_t* y,
                                    float* rrms, int64_t rows, int64_t cols, float eps);
typedef void (*nc_rmsnorm_bwd16_fn)(const uint16_t* dy, const uint16_t* x, const float* gamma,
                                    const float* rrms, uint16_t* dx, float* dgamma,
                                    int64_t rows, int64_t cols);

typedef struct {
  const char* name;
  int op;          /* NC_LAYERNORM_FWD, NC_LAYERNORM_BWD, NC_RMSNORM_FWD or NC_RMSNORM_BWD */
  nc_dtype dtype;  /* storage of x, y, dy, dx; fn has the matching type above */
  void (*fn)(void);
} nc_kernel_ext;

typedef const nc_kernel_ext* (*normcheck_plugin_kernels_ext_fn)(int* n);

/* ---- Declared domain (optional) ----
 *
 * A plugin whose kernels support less than every problem also exports
 *   const char* normcheck_plugin_domain(const char* kernel_name);
 * It returns, for a kernel of its lists, the kernel's domain in normcheck's
 * text form (docs/plugins.md), e.g. "eps>=1e-06 d=1..65536 |x|<=10000", or
 * NULL for the default domain (a version-2 kernel states its domain in its
 * own entry: nc_kernel_v2::domain, the same text). The terms it states replace the default's;
 * normcheck declines problems outside the domain: fuzz never counts them as
 * findings and the reports list them as the kernel's limits. A text normcheck
 * cannot read refuses the plugin. A plugin without the symbol loads as before. */
typedef const char* (*normcheck_plugin_domain_fn)(const char* kernel_name);

/* ---- Version 2: kernels by op spec, called with tensor descriptors (optional) ----
 *
 * A plugin that has such kernels exports
 *   const nc_kernel_v2* normcheck_plugin_kernels_v2(int* n);
 * Its kernels join the others (a plugin may have only version-2 kernels:
 * normcheck_plugin_kernels() then returns n = 0). normcheck_plugin_abi() may
 * return NORMCHECK_ABI_VERSION (1) or NORMCHECK_ABI_VERSION_2; both load.
 *
 * Each kernel names its op spec (docs/ops.md): which norm, the residual add,
 * the weight, the format of every tensor and where it rounds, e.g.
 *   "rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16".
 * normcheck holds the kernel to that spec's rounding policy and reports its
 * distance from exact math. */

#define NORMCHECK_ABI_VERSION_2 2

/* One tensor of a call. data points at element (0, 0); element (i, j) is at
   data + i * row_stride + j elements of `dtype`. Per-column tensors (gamma,
   beta, dgamma, dbeta) are 1 x cols, per-row ones (mean, rstd) rows x 1.
   data is NULL for a tensor the call does not pass: one the spec does not
   have, or gamma / beta when the problem has none (weight 1, bias 0). */
typedef struct {
  void* data;
  int32_t dtype;  /* nc_dtype */
  int64_t rows, cols;
  int64_t row_stride;  /* >= cols; normcheck passes rows that are not contiguous too */
} nc_tensor;

/* The tensors of one call, by name. Inputs are read only (a write is a
   finding); outputs are written in full. In a backward, mean and rstd are
   the forward's saved statistics (inputs). rstd holds rrms for RMSNorm. A
   backward whose spec says from=y gets the forward's output in y and beta
   (inputs), and no x and no mean.
   A forward whose spec quantizes y (quant=e4m3|e5m2|int8, docs/ops.md) writes
   y's codes (y.dtype NC_E4M3, NC_E5M2 or NC_I8) and has `scale`, float32:
   with scale=static an input, 1 x 1, the scale y is divided by; with
   scale=token an output, rows x 1, and with scale=block:G an output,
   rows x ceil(cols / G), the scale the kernel computed for each row or block.
   With scale_apply=multiply the static scale multiplies (t = y * scale) and
   `scale_inv`, an output, 1 x 1, float32, receives fl32(1 / scale); with the
   word `amax`, `amax`, an output, 1 x 1, float32, receives the largest |y|
   over the tensor (NaN when a y is NaN). Either is NULL when the spec does not
   have it.
   `scale`, then `scale_inv` and `amax`, come after the fields of the first
   version-2 header: a plugin that has no quantized kernel (no such word) may
   be built without them (size says which). */
typedef struct {
  uint32_t size;  /* sizeof(nc_call) of the header normcheck was built with: fields are only appended */
  int64_t rows, cols;
  float eps;      /* forward and backward */
  nc_tensor x, residual, gamma, beta, dy;
  nc_tensor y, residual_out, mean, rstd, dx, dgamma, dbeta;
  nc_tensor scale;
  nc_tensor scale_inv, amax;
} nc_call;

typedef void (*nc_kernel_v2_fn)(const nc_call* call);

typedef struct {
  const char* name;
  const char* spec;    /* the op spec's text form */
  const char* domain;  /* the inputs it supports (docs/plugins.md), or NULL: every input */
  nc_kernel_v2_fn fn;
} nc_kernel_v2;

typedef const nc_kernel_v2* (*normcheck_plugin_kernels_v2_fn)(int* n);

#ifdef __cplusplus
}
#endif

#endif /* NORMCHECK_PLUGIN_H */
