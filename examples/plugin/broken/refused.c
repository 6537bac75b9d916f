/* Libraries the plugin loader must refuse, one defect each (a REFUSED_<DEFECT>
 * macro); normcheck exits 2 naming the reason. */
#include <stddef.h>

#include <normcheck/plugin.h>

static void fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                int64_t rows, int64_t cols, float eps) {
  (void)x, (void)gamma, (void)beta, (void)y, (void)mean, (void)rstd, (void)rows, (void)cols, (void)eps;
}

#if REFUSED_MISSING_DEPENDENCY
int vanishing_dependency_value(void);
int refused_uses_dependency(void) { return vanishing_dependency_value(); }
#endif

static const nc_kernel kKernels[] = {
#if REFUSED_DUPLICATE
    {"refused.twice", NC_LAYERNORM_FWD, (void (*)(void))fwd},
    {"refused.twice", NC_LAYERNORM_FWD, (void (*)(void))fwd},
#elif REFUSED_NULL_FN
    {"refused.null_fn", NC_LAYERNORM_FWD, NULL},
#elif REFUSED_UNKNOWN_OP
    {"refused.unknown_op", (nc_op)42, (void (*)(void))fwd},
#else
    {"refused.some_kernel", NC_LAYERNORM_FWD, (void (*)(void))fwd},
#endif
};

#if !REFUSED_MISSING_SYMBOL
int normcheck_plugin_abi(void) {
#if REFUSED_ABI_VERSION /* normcheck supports versions 1 and 2 */
  return NORMCHECK_ABI_VERSION_2 + 1;
#else
  return NORMCHECK_ABI_VERSION;
#endif
}
#endif

const nc_kernel* normcheck_plugin_kernels(int* n) {
#if REFUSED_NO_KERNELS
  *n = 0;
  return NULL;
#else
  *n = (int)(sizeof kKernels / sizeof kKernels[0]);
  return kKernels;
#endif
}
