/* The plugin: the library `normcheck check/fuzz --plugin` loads
 * (normcheck/plugin.h, docs/plugins.md). Built twice: with the correct kernel,
 * and with MY_NORMS_BROKEN defined, the one-pass one under the same name. */
#include <normcheck/plugin.h>

#include "my_norms.h"

#ifdef MY_NORMS_BROKEN
#define MY_KERNEL my_layernorm_fwd_onepass
#else
#define MY_KERNEL my_layernorm_fwd
#endif

static const nc_kernel kKernels[] = {
    {"my.layernorm_fwd", NC_LAYERNORM_FWD, (void (*)(void))MY_KERNEL},
};

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }

const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = (int)(sizeof kKernels / sizeof kKernels[0]);
  return kKernels;
}
