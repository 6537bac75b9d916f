/* Version-2 example plugin: norm ops as projects ship them, each declared by
 * its op spec (docs/ops.md) and called with tensor descriptors
 * (docs/plugins.md, "Version 2: kernels by op spec"). Each kernel is the
 * public algorithm of the op it is named after, written here in float:
 *
 *   fused_add_rmsnorm.stored_sum  vLLM's fused_add_rms_norm: the sum is rounded
 *                                 to bf16, stored, and normalized as stored;
 *                                 y = bf16(bf16(s r) gamma)
 *   fused_add_rmsnorm.float_sum   FlashInfer's fused_add_rmsnorm: the float sum
 *                                 is normalized, its bf16 rounding stored;
 *                                 y = bf16(s r gamma)
 *   rmsnorm.llama                 Hugging Face LlamaRMSNorm: y = bf16(bf16(x r) gamma)
 *   rmsnorm.gemma                 Hugging Face GemmaRMSNorm: y = bf16(x r (1 + gamma))
 *   skip_layernorm                the op of ONNX Runtime's SkipLayerNormalization in
 *                                 float32: s = x + skip stored, a LayerNorm of s, here
 *                                 with two-pass statistics (ONNX Runtime's CPU kernel
 *                                 takes the one-pass variance of the broken twin)
 *   layernorm.mixed               Apex's MixedFused LayerNorm: bf16 x, float
 *                                 gamma, beta and y
 *   rmsnorm.strided               a float32 RMSNorm (every kernel here honours
 *                                 row_stride; this one is the plain case)
 *   layernorm_bwd.apex_memory_efficient
 *                                 Apex's LayerNorm backward with memory_efficient:
 *                                 bf16 y, dy and dx; xhat recovered from y as
 *                                 (y - beta) / gamma (v2_common.h)
 *   rmsnorm_bwd.apex_memory_efficient
 *                                 the same for RMSNorm, float32: xhat = y / gamma
 *
 * the forwards with r = 1 / sqrtf(mean((s - mu)^2) + eps) (mu = 0 for RMSNorm) and
 * the row loop of v2_common.h. broken/v2_broken.c has a twin of each with one defect. */
#include "v2_common.h"

/* The weight 1 + gamma in float: y = (s r) (1 + gamma); weight 1 without gamma. */
static float y_one_plus_gamma(const nc_call* c, int64_t j, float s, float mu, float r) {
  (void)mu;
  const float w = c->gamma.data ? 1.0f + v2_get(&c->gamma, 0, j) : 1.0f;
  return (s * r) * w;
}

static const v2_forward kStoredSum = {0, v2_s_sum_bf16, v2_variance_two_pass, v2_y_xhat_rounded};
static const v2_forward kFloatSum = {0, v2_s_sum, v2_variance_two_pass, v2_y_affine};
static const v2_forward kLlama = {0, v2_s_x, v2_variance_two_pass, v2_y_xhat_rounded};
static const v2_forward kGemma = {0, v2_s_x, v2_variance_two_pass, y_one_plus_gamma};
static const v2_forward kLayerNorm = {1, v2_s_sum, v2_variance_two_pass, v2_y_affine};
static const v2_forward kMixed = {1, v2_s_x, v2_variance_two_pass, v2_y_affine};
static const v2_forward kRmsNorm = {0, v2_s_x, v2_variance_two_pass, v2_y_affine};

static void fused_add_rmsnorm_stored_sum(const nc_call* c) { v2_run_forward(c, &kStoredSum); }
static void fused_add_rmsnorm_float_sum(const nc_call* c) { v2_run_forward(c, &kFloatSum); }
static void rmsnorm_llama(const nc_call* c) { v2_run_forward(c, &kLlama); }
static void rmsnorm_gemma(const nc_call* c) { v2_run_forward(c, &kGemma); }
static void skip_layernorm(const nc_call* c) { v2_run_forward(c, &kLayerNorm); }
static void layernorm_mixed(const nc_call* c) { v2_run_forward(c, &kMixed); }
static void rmsnorm_strided(const nc_call* c) { v2_run_forward(c, &kRmsNorm); }
static void layernorm_bwd_apex(const nc_call* c) { v2_run_backward_from_y(c, 1, v2_xhat_from_y); }
static void rmsnorm_bwd_apex(const nc_call* c) { v2_run_backward_from_y(c, 0, v2_xhat_from_y); }

static const nc_kernel_v2 kKernels[] = {
    {"fused_add_rmsnorm.stored_sum", V2_SPEC_STORED_SUM, NULL, fused_add_rmsnorm_stored_sum},
    {"fused_add_rmsnorm.float_sum", V2_SPEC_FLOAT_SUM, NULL, fused_add_rmsnorm_float_sum},
    {"rmsnorm.llama", V2_SPEC_LLAMA, NULL, rmsnorm_llama},
    {"rmsnorm.gemma", V2_SPEC_GEMMA, NULL, rmsnorm_gemma},
    {"skip_layernorm", V2_SPEC_SKIP_LAYERNORM, NULL, skip_layernorm},
    {"layernorm.mixed", V2_SPEC_MIXED, NULL, layernorm_mixed},
    {"rmsnorm.strided", V2_SPEC_STRIDED, NULL, rmsnorm_strided},
    {"layernorm_bwd.apex_memory_efficient", V2_SPEC_APEX_LAYERNORM_BWD, NULL, layernorm_bwd_apex},
    {"rmsnorm_bwd.apex_memory_efficient", V2_SPEC_APEX_RMSNORM_BWD, NULL, rmsnorm_bwd_apex},
};

V2_EXPORT_KERNELS(kKernels)
