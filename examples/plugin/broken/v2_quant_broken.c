/* Broken quantizing version-2 plugins: twins of kernels of v2_quant_norms.c,
 * each with one deliberate defect chosen by a V2Q_<DEFECT> macro
 * (CMakeLists.txt builds one library per defect). Each twin declares its
 * original's spec, so the defect is a departure from the declared op:
 *
 *   V2Q_FP8_SKIPS_Y_ROUNDING  rmsnorm_fp8.static casting its float32
 *                             bf16(x r) gamma where the spec's y is bf16: the
 *                             product's rounding to bf16 (c10's BFloat16
 *                             operator*) left out before the cast
 *   V2Q_FP8_AMAX_UNROUNDED    rmsnorm_fp8.dynamic_token taking the row's
 *                             largest |y| over the float32 values, not over
 *                             the bf16 y it casts: the scale it writes is
 *                             another number
 *   V2Q_INT8_DIVIDES          rmsnorm_int8.dynamic_token dividing by the
 *                             scale where the spec multiplies by its inverse
 *                             (scale_apply=inverse, vLLM's int8 path): t
 *                             differs in its last bit, and the code where t
 *                             lies that close to a half-integer
 *   V2Q_INT8_TIES_AWAY        rmsnorm_int8.dynamic_token rounding half-integers
 *                             away from zero (roundf) where the spec rounds
 *                             them to even (ties=even, cvt.rni): wrong on an
 *                             exact tie, which a row whose scale is held at
 *                             scale_min = 2^-23 has often (t = y 2^23 keeps
 *                             y's 8 bits: every other bf16 value in [64, 128)
 *                             is a half-integer)
 *   V2Q_INT8_CLAMPS_AT_127    rmsnorm_int8.static clamping at -127 (a
 *                             symmetric range) where the spec clamps at -128
 *                             (qmin=-128): wrong wherever t rounds to -128
 *   V2Q_FP8_NAN_CLAMPED       rmsnorm_fp8.static clamping t as vLLM does,
 *                             fmaxf(-448, fminf(t, 448)), which writes 448
 *                             for a NaN y, where the spec has no nan=clamp: a
 *                             finite code hides the row's fault (nan)
 *   V2Q_TE_AMAX_SKIPS_NAN     rmsnorm_fp8.te_static taking the amax with
 *                             fmaxf, as TransformerEngine does: a NaN y is
 *                             passed over and the amax is finite (nan)
 *   V2Q_TE_DIVIDES            rmsnorm_fp8.te_static dividing by the scale
 *                             where the spec multiplies (scale_apply=multiply):
 *                             the scale read as a dequantizing one */
#include "../v2_quant.h"

#if V2Q_FP8_SKIPS_Y_ROUNDING
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_xhat_rounded,
                                    .round_y = v2q_keep_f32, /* defect: v2_round_bf16 */
                                    .round_amax = v2_round_bf16, .format = NC_E4M3, .saturate = 1, .qmin = -128};
#define NAME "broken.fp8_skips_y_rounding"
#define SPEC V2Q_SPEC_STATIC_FP8

#elif V2Q_FP8_AMAX_UNROUNDED
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_xhat_rounded, .round_y = v2_round_bf16,
                                    .round_amax = v2q_keep_f32, /* defect: v2_round_bf16 */
                                    .format = NC_E4M3, .saturate = 1, .qmin = -128, .divide = 1, .dynamic = 1,
                                    .scale_ub = INFINITY, .scale_min = V2Q_FP8_SCALE_MIN};
#define NAME "broken.fp8_amax_unrounded"
#define SPEC V2Q_SPEC_TOKEN_FP8

#elif V2Q_INT8_DIVIDES
static const v2q_forward kBroken = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_I8,
                                    .divide = 1, /* defect: y * fl32(1 / s) */
                                    .dynamic = 1, .scale_ub = INFINITY, .scale_min = V2Q_INT8_SCALE_MIN};
#define NAME "broken.int8_divides"
#define SPEC V2Q_SPEC_TOKEN_INT8

#elif V2Q_INT8_TIES_AWAY
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_xhat_rounded, .round_y = v2_round_bf16,
                                    .round_amax = v2_round_bf16, .format = NC_I8,
                                    .ties_away = 1, /* defect: ties to even */
                                    .qmin = -128, .dynamic = 1, .scale_ub = INFINITY,
                                    .scale_min = V2Q_INT8_SCALE_MIN};
#define NAME "broken.int8_ties_away"
#define SPEC V2Q_SPEC_TOKEN_INT8

#elif V2Q_INT8_CLAMPS_AT_127
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_xhat_rounded, .round_y = v2_round_bf16,
                                    .round_amax = v2_round_bf16, .format = NC_I8,
                                    .qmin = -127, /* defect: -128 */
                                    .divide = 1};
#define NAME "broken.int8_clamps_at_127"
#define SPEC V2Q_SPEC_STATIC_INT8

#elif V2Q_FP8_NAN_CLAMPED
static const v2q_forward kBroken = {V2Q_LLAMA_Y, .s = v2_s_x, .format = NC_E4M3,
                                    .clamp_nan = 1 /* defect: the spec has no nan=clamp */};
#define NAME "broken.fp8_nan_clamped"
#define SPEC V2Q_SPEC_STATIC_FP8

#elif V2Q_TE_AMAX_SKIPS_NAN
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_affine, .round_y = v2q_keep_f32,
                                    .round_amax = v2q_keep_f32, .format = NC_E4M3, .saturate = 1, .qmin = -128,
                                    .multiply = 1, .amax = 1, .max = fmaxf /* defect: v2q_max */};
#define NAME "broken.te_amax_skips_nan"
#define SPEC V2Q_SPEC_TE_STATIC_FP8

#elif V2Q_TE_DIVIDES
static const v2q_forward kBroken = {.s = v2_s_x, .y = v2_y_affine, .round_y = v2q_keep_f32,
                                    .round_amax = v2q_keep_f32, .format = NC_E4M3, .saturate = 1, .qmin = -128,
                                    .divide = 1, /* defect: y * s */
                                    .multiply = 1, .amax = 1};
#define NAME "broken.te_divides"
#define SPEC V2Q_SPEC_TE_STATIC_FP8

#else
#error "define one V2Q_<DEFECT> (CMakeLists.txt)"
#endif

static void broken_kernel(const nc_call* c) { v2q_run_forward(c, &kBroken); }

static const nc_kernel_v2 kKernels[] = {{NAME, SPEC, NULL, broken_kernel}};

V2_EXPORT_KERNELS(kKernels)
