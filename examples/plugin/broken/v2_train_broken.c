/* Twins of the training backwards of v2_train_norms.c, one realistic defect
 * each, selected at build time, each declaring its original's spec:
 *
 *   V2T_DGAMMA_SUMMED_IN_BF16  the Liger-style backward keeps dgamma in one bf16
 *                              running sum over every row where its spec declares
 *                              float32 partials of 64 rows: once the sum's bf16
 *                              spacing passes the terms it stops growing (PyTorch
 *                              1.13's CPU bf16 backward does this; issue 38)
 *   V2T_STATS_IN_BF16          the Apex-style backward reads mean and rstd rounded
 *                              to bf16 (its forward saved them so) where its spec
 *                              declares float32 statistics
 *   V2T_FORGETS_DRESIDUAL      the fused add backward writes the norm's gradient
 *                              without the residual stream's incoming gradient
 *   V2T_FORGETS_ONE_PLUS       the Gemma backward forms g = gamma dy, not
 *                              (1 + gamma) dy, in dx; dgamma is unchanged */
#include "../v2_backward.h"

#if defined(V2T_DGAMMA_SUMMED_IN_BF16)
static const v2_backward kTwin = {0, 0, v2_exact, v2_round_bf16, v2_round_bf16, v2_round_bf16,
                                  0, v2_exact, v2_round_bf16, 1};
#define TWIN_NAME "rmsnorm_bwd.liger_llama"
#define TWIN_SPEC V2_SPEC_LIGER_LLAMA_BWD
#elif defined(V2T_STATS_IN_BF16)
static const v2_backward kTwin = {1, 0, v2_round_bf16, v2_exact, v2_exact, v2_exact, 32, v2_exact, v2_exact, 1};
#define TWIN_NAME "layernorm_bwd.apex_two_stage"
#define TWIN_SPEC V2_SPEC_APEX_TWO_STAGE_BWD
#elif defined(V2T_FORGETS_DRESIDUAL)
static const v2_backward kTwin = {0, 0, v2_exact, v2_exact, v2_exact, v2_exact, 64, v2_exact, v2_exact, 0};
#define TWIN_NAME "rmsnorm_bwd.fused_add"
#define TWIN_SPEC V2_SPEC_FUSED_ADD_RMSNORM_BWD
#elif defined(V2T_FORGETS_ONE_PLUS)
static const v2_backward kTwin = {0, 0, v2_exact, v2_exact, v2_exact, v2_exact, 0, v2_exact, v2_exact, 1};
#define TWIN_NAME "rmsnorm_bwd.gemma"
#define TWIN_SPEC V2_SPEC_GEMMA_BWD
#else
#error "define one V2T_<DEFECT>"
#endif

static void twin(const nc_call* c) { v2_run_backward(c, &kTwin); }

static const nc_kernel_v2 kKernels[] = {{TWIN_NAME, TWIN_SPEC, NULL, twin}};

V2_EXPORT_KERNELS(kKernels)
