/* Version-2 example plugin whose kernels quantize their output: RMSNorms
 * fused with a cast of y to fp8 e4m3 or int8 codes, bf16 activations, each
 * declared by its op spec (docs/ops.md, "Quantized outputs"). Each kernel is
 * the public algorithm of the vLLM kernel it is named after, written here in
 * plain C (float32 arithmetic, v2_quant.h's row loop and casts):
 *
 *   rmsnorm_fp8.static            vLLM's rms_norm_static_fp8_quant:
 *                                 y = bf16(bf16(x r) gamma) (c10's BFloat16
 *                                 product is rounded), t = y * fl32(1 / s),
 *                                 clamped to +-448, e4m3 to nearest even
 *   fused_add_rmsnorm_fp8.static  vLLM's fused_add_rms_norm_static_fp8_quant:
 *                                 the sum is rounded to bf16, stored as
 *                                 residual_out and normalized as stored; then
 *                                 as rmsnorm_fp8.static
 *   rmsnorm_int8.dynamic_token    vLLM's rms_norm_dynamic_per_token_quant to
 *                                 int8: s = max(a / 127, FLT_EPSILON) with a the
 *                                 row's largest |y| (y in bf16), written per
 *                                 row; t = y * fl32(1 / s), to nearest even,
 *                                 clamped to [-128, 127] (cvt.rni.sat.s8.f32)
 *   rmsnorm_fp8.dynamic_token     the same to e4m3: s = max(a / 448,
 *                                 1 / (448 * 512)), t = y / s (vLLM does not
 *                                 invert an fp8 scale, to match FBGEMM)
 *   rmsnorm_fp8.dynamic_token_ub  the same with its scale_ub: a = min(a, 4), so
 *                                 a row whose largest |y| passes 4 saturates
 *   fused_add_rmsnorm_fp8.dynamic_token
 *                                 vLLM's rms_norm_dynamic_per_token_quant with
 *                                 its residual: it normalizes the float32 sum
 *                                 x + residual and stores bf16(sum), unlike the
 *                                 static fused kernel (round=sum:f32)
 *   rmsnorm_int8.static           LlamaRMSNorm's bf16 y followed by vLLM's
 *                                 static_scaled_int8_quant: t = y / s, to
 *                                 nearest even, clamped to [-128, 127]
 *   rmsnorm_fp8.te_static         TransformerEngine's RMSNorm with an fp8
 *                                 output: y = x r gamma in float32, t = y * s
 *                                 (s quantizes: scale_apply=multiply), e4m3
 *                                 saturating, scale_inv = fl32(1 / s) and the
 *                                 tensor's amax written (TE's own amax is
 *                                 fmaxf's, which passes over a NaN y; this one
 *                                 keeps it: broken.te_amax_skips_nan has TE's)
 *
 * The int8 kernels write 0 for a NaN t (cvt.rni.sat.s8.f32's NaN) and declare
 * it (nan=clamp); the fp8 ones write the NaN code (vLLM's clamp fmaxf(-448,
 * fminf(t, 448)) would write 448 there: broken.fp8_nan_clamped).
 *
 * r = 1 / sqrtf(sum(s^2) / d + eps) with the sum left to right (vLLM reduces
 * across a thread block; the order is the bound's business, not the spec's).
 * None writes rrms (stats=none). broken/v2_quant_broken.c has twins with one
 * defect each. */
#include "v2_quant.h"

static const v2q_forward kStaticFp8 = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_E4M3};
static const v2q_forward kStoredSumStaticFp8 = {V2Q_LLAMA_Y, .s = v2_s_sum_bf16, .format = NC_E4M3};
static const v2q_forward kTokenInt8 = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_I8, .dynamic = 1,
                                       .scale_ub = INFINITY, .scale_min = V2Q_INT8_SCALE_MIN};
static const v2q_forward kTokenFp8 = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_E4M3, .divide = 1, .dynamic = 1,
                                      .scale_ub = INFINITY, .scale_min = V2Q_FP8_SCALE_MIN};
static const v2q_forward kTokenFp8Ub = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_E4M3, .divide = 1, .dynamic = 1,
                                        .scale_ub = 4.0f, .scale_min = V2Q_FP8_SCALE_MIN};
static const v2q_forward kFloatSumTokenFp8 = {V2Q_LLAMA_Y, .s = v2_s_sum, .format = NC_E4M3, .divide = 1, .dynamic = 1,
                                              .scale_ub = INFINITY, .scale_min = V2Q_FP8_SCALE_MIN};
static const v2q_forward kStaticInt8 = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_I8, .divide = 1};
static const v2q_forward kTeStaticFp8 = {.s = v2_s_x, .y = v2_y_affine, .round_y = v2q_keep_f32,
                                         .round_amax = v2q_keep_f32, .format = NC_E4M3, .saturate = 1,
                                         .qmin = -128, .multiply = 1, .amax = 1};

static void rmsnorm_fp8_static(const nc_call* c) { v2q_run_forward(c, &kStaticFp8); }
static void fused_add_rmsnorm_fp8_static(const nc_call* c) { v2q_run_forward(c, &kStoredSumStaticFp8); }
static void rmsnorm_int8_token(const nc_call* c) { v2q_run_forward(c, &kTokenInt8); }
static void rmsnorm_fp8_token(const nc_call* c) { v2q_run_forward(c, &kTokenFp8); }
static void rmsnorm_fp8_token_ub(const nc_call* c) { v2q_run_forward(c, &kTokenFp8Ub); }
static void fused_add_rmsnorm_fp8_token(const nc_call* c) { v2q_run_forward(c, &kFloatSumTokenFp8); }
static void rmsnorm_int8_static(const nc_call* c) { v2q_run_forward(c, &kStaticInt8); }
static void rmsnorm_fp8_te_static(const nc_call* c) { v2q_run_forward(c, &kTeStaticFp8); }

static const nc_kernel_v2 kKernels[] = {
    {"rmsnorm_fp8.static", V2Q_SPEC_STATIC_FP8, NULL, rmsnorm_fp8_static},
    {"fused_add_rmsnorm_fp8.static", V2Q_SPEC_STORED_SUM_STATIC_FP8, NULL, fused_add_rmsnorm_fp8_static},
    {"rmsnorm_int8.dynamic_token", V2Q_SPEC_TOKEN_INT8, NULL, rmsnorm_int8_token},
    {"rmsnorm_fp8.dynamic_token", V2Q_SPEC_TOKEN_FP8, NULL, rmsnorm_fp8_token},
    {"rmsnorm_fp8.dynamic_token_ub", V2Q_SPEC_TOKEN_FP8_UB, NULL, rmsnorm_fp8_token_ub},
    {"fused_add_rmsnorm_fp8.dynamic_token", V2Q_SPEC_FLOAT_SUM_TOKEN_FP8, NULL, fused_add_rmsnorm_fp8_token},
    {"rmsnorm_int8.static", V2Q_SPEC_STATIC_INT8, NULL, rmsnorm_int8_static},
    {"rmsnorm_fp8.te_static", V2Q_SPEC_TE_STATIC_FP8, NULL, rmsnorm_fp8_te_static},
};

V2_EXPORT_KERNELS(kKernels)
