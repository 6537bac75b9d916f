/* Broken version-2 plugins: twins of the kernels of v2_norms.c, each with one
 * deliberate defect chosen by a V2_<DEFECT> macro (CMakeLists.txt builds one
 * library per defect). Each twin declares its original's spec, so the defect
 * is a departure from the declared op that normcheck must find:
 *
 *   V2_STORED_SUM_READS_FLOAT_SUM  vLLM's fused add that normalizes the float sum,
 *                                  not the bf16 sum it stores (round=sum:bf16)
 *   V2_FLOAT_SUM_READS_STORED      FlashInfer's fused add that normalizes the
 *                                  bf16-rounded sum, not its float sum (round=sum:f32)
 *   V2_LLAMA_ROUNDS_ONCE           LlamaRMSNorm without its rounding at xhat:
 *                                  bf16(x r gamma), Gemma's single rounding
 *   V2_GEMMA_ROUNDED_WEIGHT        GemmaRMSNorm with the weight bf16(1 + gamma)
 *   V2_SKIP_ONEPASS_VARIANCE       SkipLayerNorm with the one-pass variance
 *                                  E[s^2] - mean^2, which cancels
 *   V2_MIXED_ROUNDS_Y              the mixed LayerNorm that rounds y to bf16
 *                                  before storing it as float
 *   V2_STRIDE_IGNORED              the strided RMSNorm assuming contiguous rows:
 *                                  x and y rows cols apart, not row_stride
 * and the defects a fused add + norm written with vectors can have (the spec
 * of SkipLayerNorm, or of normcheck's layernorm_fwd.hwy_add_bf16):
 *   V2_TAIL_LANES_IN_VARIANCE      the row's tail read as a vector of 8 with the
 *                                  lanes past d zero, and those lanes' (0 - mu)^2
 *                                  summed into the variance
 *   V2_BATCH_VARIANT_VARIANCE      the variance summed in two halves when the
 *                                  call has more than one row, left to right for
 *                                  a row alone: a reduction split chosen by the
 *                                  batch, each within the bound
 *   V2_ROUNDS_XHAT                 a cast in the wrong place: xhat rounded to
 *                                  bf16 before gamma and beta (round=xhat:bf16,
 *                                  which the spec does not have)
 *   V2_RESIDUAL_STRIDE_IGNORED     the residual read and the sum written as if
 *                                  their rows were contiguous, not row_stride
 *                                  apart (x and y at their stride)
 * and a backward that reads y (Apex's memory_efficient):
 *   V2_FROM_Y_IGNORES_BETA         xhat recovered as y / gamma, beta not
 *                                  subtracted (a LayerNorm without bias's
 *                                  recovery on one with bias)
 *   V2_FROM_Y_CLAMPS_WEIGHT        Apex's division by gamma held at least eps
 *                                  away from zero (clamp_by_magnitude): xhat
 *                                  is wrong wherever |gamma| < eps */
#include "../v2_common.h"

#if V2_STORED_SUM_READS_FLOAT_SUM
static const v2_forward kBroken = {0, v2_s_sum /* defect: v2_s_sum_bf16 */, v2_variance_two_pass, v2_y_xhat_rounded};
#define NAME "broken.stored_sum_reads_float_sum"
#define SPEC V2_SPEC_STORED_SUM

#elif V2_FLOAT_SUM_READS_STORED
static const v2_forward kBroken = {0, v2_s_sum_bf16 /* defect: v2_s_sum */, v2_variance_two_pass, v2_y_affine};
#define NAME "broken.float_sum_reads_stored"
#define SPEC V2_SPEC_FLOAT_SUM

#elif V2_LLAMA_ROUNDS_ONCE
/* defect: gamma (x r), rounded only when stored; the spec rounds x r to bf16 first */
static const v2_forward kBroken = {0, v2_s_x, v2_variance_two_pass, v2_y_affine};
#define NAME "broken.llama_rounds_once"
#define SPEC V2_SPEC_LLAMA

#elif V2_GEMMA_ROUNDED_WEIGHT
static float y_rounded_weight(const nc_call* c, int64_t j, float s, float mu, float r) {
  (void)mu;
  const float w = c->gamma.data ? v2_round_bf16(1.0f + v2_get(&c->gamma, 0, j)) : 1.0f; /* defect */
  return (s * r) * w;
}
static const v2_forward kBroken = {0, v2_s_x, v2_variance_two_pass, y_rounded_weight};
#define NAME "broken.gemma_rounded_weight"
#define SPEC V2_SPEC_GEMMA

#elif V2_SKIP_ONEPASS_VARIANCE
/* defect: E[s^2] - mu^2, which cancels when |mu| is large against sigma (and can go negative) */
static float variance_one_pass(const nc_call* c, int64_t i, v2_input_fn s, float mu) {
  return v2_row_sum_squares(c, i, s) / (float)c->cols - mu * mu;
}
static const v2_forward kBroken = {1, v2_s_sum, variance_one_pass, v2_y_affine};
#define NAME "broken.skip_onepass_variance"
#define SPEC V2_SPEC_SKIP_LAYERNORM

#elif V2_MIXED_ROUNDS_Y
static float y_rounded_to_bf16(const nc_call* c, int64_t j, float s, float mu, float r) {
  return v2_round_bf16(v2_y_affine(c, j, s, mu, r)); /* defect: y is float32 */
}
static const v2_forward kBroken = {1, v2_s_x, v2_variance_two_pass, y_rounded_to_bf16};
#define NAME "broken.mixed_rounds_y"
#define SPEC V2_SPEC_MIXED

#elif V2_STRIDE_IGNORED
static const v2_forward kRmsNorm = {0, v2_s_x, v2_variance_two_pass, v2_y_affine};
static void rmsnorm_contiguous(const nc_call* c) {
  nc_call contiguous = *c;
  contiguous.x.row_stride = c->cols; /* defect: the rows of x and y are row_stride apart */
  contiguous.y.row_stride = c->cols;
  v2_run_forward(&contiguous, &kRmsNorm);
}
#define NAME "broken.stride_ignored"
#define SPEC V2_SPEC_STRIDED

#elif V2_TAIL_LANES_IN_VARIANCE
static float variance_tail_lanes(const nc_call* c, int64_t i, v2_input_fn s, float mu) {
  const int64_t padded = (c->cols + 7) / 8 * 8; /* defect: the masked lanes j >= cols count */
  float squares = 0.0f;
  for (int64_t j = 0; j < padded; ++j) {
    const float centered = (j < c->cols ? s(c, i, j) : 0.0f) - mu;
    squares += centered * centered;
  }
  return squares / (float)c->cols;
}
static const v2_forward kBroken = {1, v2_s_sum, variance_tail_lanes, v2_y_affine};
#define NAME "broken.tail_lanes_in_variance"
#define SPEC V2_SPEC_SKIP_LAYERNORM

#elif V2_BATCH_VARIANT_VARIANCE
static float variance_split_by_batch(const nc_call* c, int64_t i, v2_input_fn s, float mu) {
  if (c->rows == 1) return v2_variance_two_pass(c, i, s, mu);
  float low = 0.0f, high = 0.0f; /* defect: another summation order when the call has other rows */
  for (int64_t j = 0; j < c->cols; ++j) {
    const float centered = s(c, i, j) - mu;
    if (j < c->cols / 2) low += centered * centered;
    else high += centered * centered;
  }
  return (low + high) / (float)c->cols;
}
static const v2_forward kBroken = {1, v2_s_sum, variance_split_by_batch, v2_y_affine};
#define NAME "broken.batch_variant_variance"
#define SPEC V2_SPEC_SKIP_LAYERNORM

#elif V2_ROUNDS_XHAT
static float y_xhat_rounded_affine(const nc_call* c, int64_t j, float s, float mu, float r) {
  const float scaled = v2_gamma(c, j) * v2_round_bf16((s - mu) * r); /* defect: the cast */
  return c->beta.data ? scaled + v2_get(&c->beta, 0, j) : scaled;
}
static const v2_forward kBroken = {1, v2_s_sum_bf16, v2_variance_two_pass, y_xhat_rounded_affine};
#define NAME "broken.rounds_xhat"
#define SPEC V2_SPEC_STORED_SKIP_LAYERNORM

#elif V2_RESIDUAL_STRIDE_IGNORED
static const v2_forward kSkipLayerNorm = {1, v2_s_sum, v2_variance_two_pass, v2_y_affine};
static void skip_layernorm_contiguous_residual(const nc_call* c) {
  nc_call contiguous = *c;
  contiguous.residual.row_stride = c->cols; /* defect: residual and its sum are row_stride apart */
  contiguous.residual_out.row_stride = c->cols;
  v2_run_forward(&contiguous, &kSkipLayerNorm);
}
#define NAME "broken.residual_stride_ignored"
#define SPEC V2_SPEC_SKIP_LAYERNORM

#elif V2_FROM_Y_IGNORES_BETA
static float xhat_without_beta(const nc_call* c, int64_t i, int64_t j) {
  return v2_get(&c->y, i, j) / v2_gamma(c, j); /* defect: (y - beta) / gamma */
}
static void layernorm_bwd_ignoring_beta(const nc_call* c) { v2_run_backward_from_y(c, 1, xhat_without_beta); }
#define NAME "broken.from_y_ignores_beta"
#define SPEC V2_SPEC_APEX_LAYERNORM_BWD

#elif V2_FROM_Y_CLAMPS_WEIGHT
static float xhat_clamped_weight(const nc_call* c, int64_t i, int64_t j) {
  const float w = v2_gamma(c, j);
  const float clamped = w >= 0.0f ? fmaxf(w, c->eps) : fminf(w, -c->eps); /* defect: gamma itself */
  return (v2_get(&c->y, i, j) - v2_beta(c, j)) / clamped;
}
static void layernorm_bwd_clamped_weight(const nc_call* c) { v2_run_backward_from_y(c, 1, xhat_clamped_weight); }
#define NAME "broken.from_y_clamps_weight"
#define SPEC V2_SPEC_APEX_LAYERNORM_BWD

#else
#error "define one V2_<DEFECT> (CMakeLists.txt)"
#endif

#if V2_STRIDE_IGNORED
#define broken_kernel rmsnorm_contiguous
#elif V2_RESIDUAL_STRIDE_IGNORED
#define broken_kernel skip_layernorm_contiguous_residual
#elif V2_FROM_Y_IGNORES_BETA
#define broken_kernel layernorm_bwd_ignoring_beta
#elif V2_FROM_Y_CLAMPS_WEIGHT
#define broken_kernel layernorm_bwd_clamped_weight
#else
static void broken_kernel(const nc_call* c) { v2_run_forward(c, &kBroken); }
#endif

static const nc_kernel_v2 kKernels[] = {{NAME, SPEC, NULL, broken_kernel}};

V2_EXPORT_KERNELS(kKernels)
