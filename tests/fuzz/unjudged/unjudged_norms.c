/* A version-2 plugin whose kernels declare specs that evaluate() does not
   judge (spec_not_judged, verify/include/normcheck/evaluate.h): an RMSNorm
   backward with `bias` (its dbeta has no reference) and a forward that sums in
   bf16 (`acc=` on a forward). Every case of either is declined, so no command
   may read their run as a pass: each exits 2 naming the kernel and the
   reason (docs/cli.md, "Nothing judged is never a pass"). The functions write
   nothing: a case that reached one would be an unwritten output, exit 1. */
#include "../../../examples/plugin/v2_common.h"

static void never_called(const nc_call* c) { (void)c; }

static const nc_kernel_v2 kKernels[] = {
    {"unjudged.rmsnorm_bwd_bias", "rmsnorm bwd bias", NULL, never_called},
    {"unjudged.rmsnorm_fwd_acc", "rmsnorm fwd dtype=bf16 acc=bf16", NULL, never_called},
};

V2_EXPORT_KERNELS(kKernels)
