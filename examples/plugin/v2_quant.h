/* What the quantizing version-2 example plugins share (v2_quant_norms.c and
 * its broken twins, broken/v2_quant_broken.c): the casts to the 8-bit codes
 * and the row loop of a forward whose y is written as codes (docs/ops.md,
 * "Quantized outputs"; docs/plugins.md, "Quantized outputs").
 *
 * The forward of one row, every operation in float, in this order:
 *   s_j  = the kernel's s(): x, x + residual, or that sum rounded to bf16
 *   r    = 1 / sqrtf(sum_j s_j^2 / d + eps), summed left to right
 *   y_j  = the kernel's y(s_j, r) (v2_common.h), then rounded to y's dtype
 *          (round_y: bf16, or nothing for a float32 y): the value before the cast
 *   s    = the scale: the input scale[0] (scale=static), or, per row
 *          (scale=token), max(fl32(min(a, scale_ub) / qmax), scale_min) with
 *          a = max_j |y_j|, written to scale[i]
 *   t_j  = y_j * fl32(1 / s), y_j / s (scale_apply=divide), or y_j * s
 *          (scale_apply=multiply, which also writes scale_inv = fl32(1 / s))
 *   q_j  = the cast of t_j: fp8 to nearest, ties to even, t clamped to
 *          [-max, max] first; int8 to the nearest integer, ties to even (or
 *          away from zero), clamped to [qmin, 127]
 * residual_out (when the call passes it) is x + residual rounded to its dtype;
 * a dynamic scale is written when the call passes `scale` (normcheck always
 * passes it, and always passes the static scale, an input).
 * With the word amax the kernel writes amax, the largest |y_j| over every row.
 * A row with a non-finite x or residual casts NaN: the fp8 NaN code 0x7f,
 * int8 0 (int8 has no NaN: cvt.rni.sat.s8.f32 converts NaN to 0, which the
 * int8 specs declare: nan=clamp), and its dynamic scale and the amax are NaN.
 * A non-finite gamma touches only its own column, through IEEE arithmetic
 * (docs/semantics.md): y_j = +-inf or NaN there; an infinite y_j makes the
 * row's dynamic scale +inf, which casts every finite y of the row to 0, and a
 * NaN y_j makes it NaN: the maximum is v2q_max, which keeps a NaN, where
 * fmaxf would pass over it and hide the fault (docs/semantics.md, "Quantized
 * outputs on a non-finite row"). (v2_common.h's row guard also counts
 * gamma, beta and eps: not this one, whose codes are judged element by
 * element on every row whose x and residual are finite.)
 *
 * The casts are written from the formats' rules with integer and exact float
 * operations only (floorf, ldexpf, bit shifts), so they do not depend on the
 * floating-point rounding mode. */
#ifndef NORMCHECK_EXAMPLE_V2_QUANT_H
#define NORMCHECK_EXAMPLE_V2_QUANT_H

#include "v2_common.h"

/* The specs of the examples; a broken twin declares its original's. vLLM's
   kernels write no rrms: stats=none. y is bf16 before the cast (y's dtype,
   the activation dtype by default). scale_min: vLLM's smallest scale,
   std::numeric_limits<float>::epsilon() for int8 and 1 / (448 * 512) for
   e4m3, as the shortest decimal text of the float32. */
#define V2Q_SPEC_STATIC_FP8 "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=static"
#define V2Q_SPEC_STORED_SUM_STATIC_FP8 \
  "rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16 stats=none quant=e4m3 scale=static"
#define V2Q_SPEC_TOKEN_INT8                                                                                    \
  "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=int8 scale=token scale_min=1.1920929e-07 " \
  "nan=clamp"
#define V2Q_SPEC_TOKEN_FP8                                                                            \
  "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=token scale_apply=divide " \
  "scale_min=4.359654e-06"
#define V2Q_SPEC_TOKEN_FP8_UB                                                                         \
  "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=token scale_apply=divide " \
  "scale_ub=4 scale_min=4.359654e-06"
#define V2Q_SPEC_FLOAT_SUM_TOKEN_FP8                                                                              \
  "rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:f32,xhat:bf16 stats=none quant=e4m3 scale=token scale_apply=divide " \
  "scale_min=4.359654e-06"
#define V2Q_SPEC_STATIC_INT8 \
  "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=int8 scale=static scale_apply=divide nan=clamp"
/* TransformerEngine's RMSNorm with an fp8 output: y = x r gamma in float32
   (y=f32), t = y * scale, scale_inv = fl32(1 / scale) and the tensor's amax
   written; TE also writes rsigma, which the example leaves out (stats=none). */
#define V2Q_SPEC_TE_STATIC_FP8 \
  "rmsnorm fwd dtype=bf16 gamma=bf16 y=f32 stats=none quant=e4m3 scale=static scale_apply=multiply amax"

/* The smallest dynamic scales of those specs, as vLLM computes them. */
#define V2Q_INT8_SCALE_MIN 0x1p-23f                  /* FLT_EPSILON */
#define V2Q_FP8_SCALE_MIN (1.0f / (448.0f * 512.0f)) /* 0x1.24924ap-18 */

/* ---- The casts ---- */

/* x rounded to the nearest integer, ties to even (ties_away: away from
   zero), for a finite x. Both rules are symmetric, so the magnitude is
   rounded: for a >= 0, floorf(a), the remainder a - floorf(a) and the + 1
   are exact in float (the remainder of a negative x, x - floorf(x), is not:
   -0.49999997 + 1 rounds to 0.5). */
static inline float v2q_round_integer(float x, int ties_away) {
  const float a = fabsf(x), below = floorf(a), rest = a - below;
  const int up = rest > 0.5f || (rest == 0.5f && (ties_away || fmodf(below, 2.0f) != 0.0f));
  const float r = up ? below + 1.0f : below;
  return x < 0.0f ? -r : r;
}

/* An OCP fp8 format: e4m3fn (4 exponent bits, bias 7, largest 448 = 0x7e,
   S.1111.111 NaN, no infinities) or e5m2 (bias 15, largest 57344 = 0x7b,
   0x7c infinity, 0x7e NaN). */
typedef struct {
  int mant_bits, bias;
  uint8_t largest_code, overflow_code, nan_code;
  float largest;
} v2q_fp8_format;

static const v2q_fp8_format v2q_e4m3 = {3, 7, 0x7e, 0x7f, 0x7f, 448.0f};
static const v2q_fp8_format v2q_e5m2 = {2, 15, 0x7b, 0x7c, 0x7e, 57344.0f};

/* The code of t, to nearest, ties to even; saturate: t clamped to
   [-largest, largest] first; otherwise a t that rounds past the largest value
   is the overflow code (e4m3fn's NaN, e5m2's infinity). */
static inline uint8_t v2q_fp8_code(const v2q_fp8_format* f, float t, int saturate) {
  const uint8_t sign = signbit(t) ? 0x80 : 0x00;
  if (isnan(t)) return (uint8_t)(sign | f->nan_code);
  float a = fabsf(t);
  if (saturate && a > f->largest) a = f->largest;
  if (a < ldexpf(1.0f, 1 - f->bias)) /* below the smallest normal: multiples of 2^(1 - bias - mant_bits) */
    return (uint8_t)(sign | (uint8_t)v2q_round_integer(ldexpf(a, f->bias - 1 + f->mant_bits), 0));
  /* normal: the float's exponent and mantissa, rounded to mant_bits (a carry
     moves the exponent on), the exponent rebiased from 127 to the format's */
  const uint32_t rounded = v2_shift_round_even(v2_bits(a), (unsigned)(23 - f->mant_bits));
  const uint32_t rebias = (uint32_t)(127 - f->bias) << f->mant_bits;
  if (rounded - rebias > f->largest_code) return (uint8_t)(sign | f->overflow_code);
  return (uint8_t)(sign | (rounded - rebias));
}

/* The int8 code of t: nearest integer (ties to even, or away from zero),
   clamped to [qmin, 127]; NaN gives 0. */
static inline uint8_t v2q_int8_code(float t, int ties_away, int qmin) {
  if (isnan(t)) return 0;
  const float r = isinf(t) ? t : v2q_round_integer(t, ties_away);
  const float clamped = r < (float)qmin ? (float)qmin : (r > 127.0f ? 127.0f : r);
  return (uint8_t)(int8_t)(int)clamped;
}

/* ---- The quantized forward ---- */

/* y_j rounded to y's dtype: the value the kernel casts. */
typedef float (*v2q_round_fn)(float v);

static inline float v2q_keep_f32(float v) { return v; }

/* The larger of a and v, NaN if either is: the maximum the definition of a
   scale and an amax takes. (fmaxf returns the other operand of a NaN.) */
static inline float v2q_max(float a, float v) { return isnan(a) || isnan(v) ? NAN : (v > a ? v : a); }
typedef float (*v2q_max_fn)(float a, float v);

typedef struct {
  v2_input_fn s;         /* the norm's input */
  v2_output_fn y;        /* y_j before the rounding to y's dtype */
  v2q_round_fn round_y;  /* y's dtype: v2_round_bf16 or v2q_keep_f32 */
  /* the rounding of the y_j whose maximum sets a dynamic scale: round_y
     (broken.fp8_amax_unrounded takes the float32 values) */
  v2q_round_fn round_amax;
  int32_t format;        /* NC_E4M3, NC_E5M2 or NC_I8 */
  int saturate;          /* fp8: clamp t to [-largest, largest] before the cast */
  int ties_away, qmin;   /* int8: ties away from zero; the clamp's low end, -128 or -127 */
  int divide;            /* t = y / s (scale_apply=divide) */
  int multiply;          /* t = y * s, scale_inv = fl32(1 / s) written (scale_apply=multiply);
                            neither: t = y * fl32(1 / s) */
  int amax;              /* writes the tensor's amax (the word amax) */
  v2q_max_fn max;        /* the maximum of a scale and the amax: v2q_max when null */
  int clamp_nan;         /* fp8: t clamped as fmaxf(-max, fminf(t, max)) (vLLM), which writes
                            a NaN t as +max (nan=clamp); 0: a NaN t is the NaN code */
  int dynamic;           /* a scale per row (scale=token), written; 0: the input scale */
  float scale_ub, scale_min;
} v2q_forward;

/* The fields every example shares: y = bf16(bf16(s r) gamma) in bf16 (the
   scale's maximum taken over those bf16 values), saturating fp8, int8 ties to
   even clamped at -128. */
#define V2Q_LLAMA_Y \
  .y = v2_y_xhat_rounded, .round_y = v2_round_bf16, .round_amax = v2_round_bf16, .saturate = 1, .qmin = -128

static inline uint8_t v2q_code(const v2q_forward* f, float t) {
  if (f->clamp_nan && f->format != NC_I8) {
    const float largest = f->format == NC_E4M3 ? v2q_e4m3.largest : v2q_e5m2.largest;
    t = fmaxf(-largest, fminf(t, largest));
  }
  switch (f->format) {
    case NC_E4M3: return v2q_fp8_code(&v2q_e4m3, t, f->saturate);
    case NC_E5M2: return v2q_fp8_code(&v2q_e5m2, t, f->saturate);
    default: return v2q_int8_code(t, f->ties_away, f->qmin);
  }
}

static inline float v2q_qmax(const v2q_forward* f) {
  return f->format == NC_E4M3 ? 448.0f : (f->format == NC_E5M2 ? 57344.0f : 127.0f);
}

static inline void v2q_put_code(const nc_call* c, int64_t i, int64_t j, uint8_t code) {
  ((uint8_t*)c->y.data)[i * c->y.row_stride + j] = code;
}

/* The row's scale: max(fl32(min(a, scale_ub) / qmax), scale_min), a the
   largest |y_j| (fmaxf, left to right). */
static inline float v2q_dynamic_scale(const nc_call* c, int64_t i, const v2q_forward* f, float r) {
  const v2q_max_fn max = f->max ? f->max : v2q_max;
  float a = 0.0f;
  for (int64_t j = 0; j < c->cols; ++j) a = max(a, fabsf(f->round_amax(f->y(c, j, f->s(c, i, j), 0.0f, r))));
  const float bounded = fminf(a, f->scale_ub);
  return fmaxf(bounded / v2q_qmax(f), f->scale_min);
}

/* Whether row i's x and residual are finite. */
static inline int v2q_row_finite(const nc_call* c, int64_t i) {
  for (int64_t j = 0; j < c->cols; ++j) {
    if (!isfinite(v2_get(&c->x, i, j))) return 0;
    if (c->residual.data && !isfinite(v2_get(&c->residual, i, j))) return 0;
  }
  return 1;
}

/* The tensor's outputs of one float: scale_inv and amax, when the call has them. */
static inline void v2q_put_scalar(const nc_tensor* t, float v) {
  if (t->data) *(float*)t->data = v;
}

static inline void v2q_run_forward(const nc_call* c, const v2q_forward* f) {
  const v2q_max_fn max = f->max ? f->max : v2q_max;
  const float given = f->dynamic ? NAN : v2_get(&c->scale, 0, 0);
  float amax = 0.0f;
  if (f->multiply) v2q_put_scalar(&c->scale_inv, 1.0f / given);
  for (int64_t i = 0; i < c->rows; ++i) {
    if (c->residual_out.data)
      for (int64_t j = 0; j < c->cols; ++j) v2_put(&c->residual_out, i, j, v2_s_sum(c, i, j));
    if (!v2q_row_finite(c, i)) {
      for (int64_t j = 0; j < c->cols; ++j) v2q_put_code(c, i, j, v2q_code(f, NAN));
      if (f->dynamic && c->scale.data) v2_put(&c->scale, i, 0, NAN);
      amax = max(amax, NAN);
      continue;
    }
    const float r = 1.0f / sqrtf(v2_variance_two_pass(c, i, f->s, 0.0f) + c->eps);
    const float scale = f->dynamic ? v2q_dynamic_scale(c, i, f, r) : given;
    if (f->dynamic && c->scale.data) v2_put(&c->scale, i, 0, scale);
    const float inverse = 1.0f / scale;
    for (int64_t j = 0; j < c->cols; ++j) {
      const float y = f->round_y(f->y(c, j, f->s(c, i, j), 0.0f, r));
      amax = max(amax, fabsf(y));
      v2q_put_code(c, i, j, v2q_code(f, f->divide ? y / scale : f->multiply ? y * scale : y * inverse));
    }
  }
  if (f->amax) v2q_put_scalar(&c->amax, amax);
}

#endif /* NORMCHECK_EXAMPLE_V2_QUANT_H */
