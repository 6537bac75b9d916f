/* A plugin whose kernels carry hostile names, for the tests of names and paths
 * (test_names_paths.cpp). Every kernel is the same deliberately wrong LayerNorm
 * forward: the two-pass LayerNorm of examples/in-your-tests (my_norms.c), then
 * 1 added to the first y of each row (of each row, so that the defect does not
 * depend on the batch), and fuzzing any of them gives an `accuracy` finding at
 * once. One library per macro:
 *   NAMES_SHELL  names that are shell syntax: a command after ';', '(' alone,
 *                $(...) and `...` command substitutions that create files;
 *   NAMES_PATHS  names that are paths: a '/', a '../', 300 bytes (over NAME_MAX);
 *   NAMES_CHDIR  a plain name, and a constructor that chdir()s to
 *                $NAMES_TEST_CHDIR when it is set (normcheck's relative paths
 *                must not follow it).
 * Names keep to what the loader accepts: no blank, quote, '#', '\' or
 * non-printable byte. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <normcheck/plugin.h>

#include "my_norms.h"

static void wrong_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                                float* rstd, int64_t rows, int64_t cols, float eps) {
  my_layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  for (int64_t r = 0; r < rows && cols > 0; ++r) y[r * cols] += 1.0f; /* the defect */
}

#define FN ((void (*)(void))wrong_layernorm_fwd)
#define X10 "xxxxxxxxxx"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10

static const nc_kernel kKernels[] = {
#if NAMES_SHELL
    {"x;touch${IFS}pwned", NC_LAYERNORM_FWD, FN},
    {"paren(", NC_LAYERNORM_FWD, FN},
    {"$(>pwned_dollar)", NC_LAYERNORM_FWD, FN},
    {"`>pwned_tick`", NC_LAYERNORM_FWD, FN},
#elif NAMES_PATHS
    {"a/b", NC_LAYERNORM_FWD, FN},
    {"../escape", NC_LAYERNORM_FWD, FN},
    {"long." X100 X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 "xxxxx", NC_LAYERNORM_FWD, FN}, /* 300 bytes */
#elif NAMES_CHDIR
    {"names.chdir", NC_LAYERNORM_FWD, FN},
#endif
};

#if NAMES_CHDIR
__attribute__((constructor)) static void move_away(void) {
  const char* to = getenv("NAMES_TEST_CHDIR");
  if (to && *to && chdir(to) != 0) abort();
}
#endif

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION; }
const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = (int)(sizeof kKernels / sizeof kKernels[0]);
  return kKernels;
}
