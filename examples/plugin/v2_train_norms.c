/* Version-2 example plugin: the backward of norms as training kernels ship
 * it, each declared by its op spec (docs/ops.md, "Backward specs") and
 * written in float from the public algorithm of the project it is named
 * after, through the row loop of v2_backward.h:
 *
 *   rmsnorm_bwd.liger_llama      Liger-Kernel's RMSNorm backward, casting mode
 *                                llama: m = bf16(dy w), dW += bf16(dy bf16(x r))
 *                                per row into a float32 partial per program, the
 *                                partials summed, dW cast to bf16
 *   layernorm_bwd.apex_two_stage Apex's LayerNorm backward: dgamma and dbeta in
 *                                two stages, float32 partials over blocks of rows
 *                                (cuComputePartGradGammaBeta) then their sum
 *                                (cuComputeGradGammaBeta), written in bf16
 *   rmsnorm_bwd.fused_add        flash-attention's Triton RMSNorm backward with
 *                                a residual: dx += dresidual, and the sum written
 *                                again as the residual's gradient (dresidual_in)
 *   rmsnorm_bwd.gemma            Gemma's RMSNorm backward: w = 1 + gamma in float
 *                                (Liger's casting mode gemma), dgamma in bf16
 *
 * broken/v2_train_broken.c has a twin of each with one defect. */
#include "v2_backward.h"

static const v2_backward kLigerLlama = {0, 0, v2_exact, v2_round_bf16, v2_round_bf16, v2_round_bf16,
                                        64, v2_exact, v2_exact, 1};
static const v2_backward kApexTwoStage = {1, 0, v2_exact, v2_exact, v2_exact, v2_exact, 32, v2_exact, v2_exact, 1};
static const v2_backward kFusedAdd = {0, 0, v2_exact, v2_exact, v2_exact, v2_exact, 64, v2_exact, v2_exact, 1};
static const v2_backward kGemma = {0, 1, v2_exact, v2_exact, v2_exact, v2_exact, 0, v2_exact, v2_exact, 1};

static void rmsnorm_bwd_liger_llama(const nc_call* c) { v2_run_backward(c, &kLigerLlama); }
static void layernorm_bwd_apex_two_stage(const nc_call* c) { v2_run_backward(c, &kApexTwoStage); }
static void rmsnorm_bwd_fused_add(const nc_call* c) { v2_run_backward(c, &kFusedAdd); }
static void rmsnorm_bwd_gemma(const nc_call* c) { v2_run_backward(c, &kGemma); }

static const nc_kernel_v2 kKernels[] = {
    {"rmsnorm_bwd.liger_llama", V2_SPEC_LIGER_LLAMA_BWD, NULL, rmsnorm_bwd_liger_llama},
    {"layernorm_bwd.apex_two_stage", V2_SPEC_APEX_TWO_STAGE_BWD, NULL, layernorm_bwd_apex_two_stage},
    {"rmsnorm_bwd.fused_add", V2_SPEC_FUSED_ADD_RMSNORM_BWD, NULL, rmsnorm_bwd_fused_add},
    {"rmsnorm_bwd.gemma", V2_SPEC_GEMMA_BWD, NULL, rmsnorm_bwd_gemma},
};

V2_EXPORT_KERNELS(kKernels)
