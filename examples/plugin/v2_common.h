/* What the version-2 example plugins share (v2_norms.c and its broken twins,
 * broken/v2_broken.c): element access through an nc_tensor in its dtype and
 * row stride, the bf16 and f16 conversions (round to nearest, ties to even),
 * the specs the kernels declare, and the row loop of a forward that every
 * kernel runs with its own norm input s and its own output formula.
 *
 * The forward of one row (docs/ops.md, "The stages of the forward"):
 *   s_j  = the kernel's s(): x, x + residual, or that sum rounded
 *   mu   = sum_j s_j / d, summed left to right (LayerNorm; RMSNorm: mu = 0)
 *   var  = the kernel's variance(): sum_j (s_j - mu)^2 / d, two passes
 *   r    = 1 / sqrtf(var + eps)
 *   y_j  = the kernel's y(s_j, mu, r), rounded to y's dtype when stored
 * every operation in float, in this order. residual_out (when the call passes
 * it) is x + residual rounded to its dtype, element by element. A row with a
 * non-finite input (x, residual, any gamma or beta, eps) gets NaN in y, mean
 * and rstd: the row-NaN convention (docs/semantics.md). Outputs the call does
 * not pass (data == NULL) are not written. */
#ifndef NORMCHECK_EXAMPLE_V2_COMMON_H
#define NORMCHECK_EXAMPLE_V2_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <normcheck/plugin.h>

/* The specs of the examples; a broken twin declares its original's. */
#define V2_SPEC_STORED_SUM "rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16"
#define V2_SPEC_FLOAT_SUM "rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:f32"
#define V2_SPEC_LLAMA "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16"
#define V2_SPEC_GEMMA "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma"
#define V2_SPEC_SKIP_LAYERNORM "layernorm fwd add round=sum:f32"
/* normcheck's own layernorm_fwd.hwy_add_bf16 (kernels/simd/): the norm reads the bf16 sum it stores */
#define V2_SPEC_STORED_SKIP_LAYERNORM "layernorm fwd dtype=bf16 add round=sum:bf16"
#define V2_SPEC_MIXED "layernorm fwd dtype=bf16 y=f32"
#define V2_SPEC_STRIDED "rmsnorm fwd"
/* Apex's memory_efficient backward: it reads the forward's output y, not x */
#define V2_SPEC_APEX_LAYERNORM_BWD "layernorm bwd dtype=bf16 from=y"
#define V2_SPEC_APEX_RMSNORM_BWD "rmsnorm bwd from=y"

/* ---- 16-bit formats: bit patterns in a uint16_t ---- */

static inline uint32_t v2_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float v2_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* bf16 is the top half of a float: widening is exact. */
static inline float v2_float_from_bf16(uint16_t h) { return v2_from_bits((uint32_t)h << 16); }

static inline uint16_t v2_bf16_from_float(float f) { /* nearest, ties to even; a NaN stays a (quiet) NaN */
  const uint32_t u = v2_bits(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* f rounded to bf16, as a float: a rounding point `:bf16`. */
static inline float v2_round_bf16(float f) { return v2_float_from_bf16(v2_bf16_from_float(f)); }

static inline float v2_float_from_f16(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) { /* zero or subnormal: mantissa 2^-24, exact in float */
    const float v = ldexpf((float)mantissa, -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return v2_from_bits(sign | 0x7f800000u | (mantissa << 13)); /* inf, NaN */
  return v2_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/* m >> shift, rounded to nearest, ties to even (1 <= shift <= 31). */
static inline uint32_t v2_shift_round_even(uint32_t m, unsigned shift) {
  const uint32_t q = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  return q + (rest > half || (rest == half && (q & 1u)));
}

static inline uint16_t v2_f16_from_float(float f) { /* nearest, ties to even; beyond 65520: inf */
  const uint32_t u = v2_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);      /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);     /* rounds to inf (65520 and up) */
  const uint32_t exponent = a >> 23, mantissa = (a & 0x7fffffu) | 0x800000u;
  if (exponent < 102) return (uint16_t)sign;                    /* below 2^-25: rounds to 0 */
  if (exponent < 113) /* below 2^-14: a subnormal (or the smallest normal, by the carry) */
    return (uint16_t)(sign | v2_shift_round_even(mantissa, 126u - exponent));
  /* normal: the biased exponent moves from 127 to 15; a carry of the mantissa moves it on */
  return (uint16_t)(sign | (((exponent - 112u) << 10) + v2_shift_round_even(mantissa & 0x7fffffu, 13u)));
}

/* ---- Tensors: element (i, j) at data + i * row_stride + j ---- */

static inline float v2_get(const nc_tensor* t, int64_t i, int64_t j) {
  const int64_t k = i * t->row_stride + j;
  switch (t->dtype) {
    case NC_BF16: return v2_float_from_bf16(((const uint16_t*)t->data)[k]);
    case NC_F16: return v2_float_from_f16(((const uint16_t*)t->data)[k]);
    default: return ((const float*)t->data)[k];
  }
}

/* Stores v rounded to the tensor's dtype. */
static inline void v2_put(const nc_tensor* t, int64_t i, int64_t j, float v) {
  const int64_t k = i * t->row_stride + j;
  switch (t->dtype) {
    case NC_BF16: ((uint16_t*)t->data)[k] = v2_bf16_from_float(v); break;
    case NC_F16: ((uint16_t*)t->data)[k] = v2_f16_from_float(v); break;
    default: ((float*)t->data)[k] = v; break;
  }
}

/* gamma_j, or 1 when the call passes no gamma. */
static inline float v2_gamma(const nc_call* c, int64_t j) { return c->gamma.data ? v2_get(&c->gamma, 0, j) : 1.0f; }

/* ---- The norm's input s_ij ---- */

typedef float (*v2_input_fn)(const nc_call* c, int64_t i, int64_t j);

static inline float v2_s_x(const nc_call* c, int64_t i, int64_t j) { return v2_get(&c->x, i, j); }

/* x + residual in float (round=sum:f32). */
static inline float v2_s_sum(const nc_call* c, int64_t i, int64_t j) {
  return v2_get(&c->x, i, j) + v2_get(&c->residual, i, j);
}

/* x + residual rounded to bf16 (round=sum:bf16): the sum a kernel stores, read back. */
static inline float v2_s_sum_bf16(const nc_call* c, int64_t i, int64_t j) { return v2_round_bf16(v2_s_sum(c, i, j)); }

/* ---- Row statistics, summed left to right in float ---- */

static inline float v2_row_sum(const nc_call* c, int64_t i, v2_input_fn s) {
  float sum = 0.0f;
  for (int64_t j = 0; j < c->cols; ++j) sum += s(c, i, j);
  return sum;
}

static inline float v2_row_sum_squares(const nc_call* c, int64_t i, v2_input_fn s) {
  float sum = 0.0f;
  for (int64_t j = 0; j < c->cols; ++j) {
    const float v = s(c, i, j);
    sum += v * v;
  }
  return sum;
}

typedef float (*v2_variance_fn)(const nc_call* c, int64_t i, v2_input_fn s, float mu);

/* The two-pass variance sum((s - mu)^2) / d; with mu = 0, RMSNorm's mean(s^2). */
static inline float v2_variance_two_pass(const nc_call* c, int64_t i, v2_input_fn s, float mu) {
  float squares = 0.0f;
  for (int64_t j = 0; j < c->cols; ++j) {
    const float centered = s(c, i, j) - mu;
    squares += centered * centered;
  }
  return squares / (float)c->cols;
}

/* ---- The forward ---- */

/* y_j of a row from s_j and the row's mu and r, before the rounding to y's dtype. */
typedef float (*v2_output_fn)(const nc_call* c, int64_t j, float s, float mu, float r);

/* The textbook output: xhat = (s - mu) r, then gamma xhat, then + beta. */
static inline float v2_y_affine(const nc_call* c, int64_t j, float s, float mu, float r) {
  const float scaled = v2_gamma(c, j) * ((s - mu) * r);
  return c->beta.data ? scaled + v2_get(&c->beta, 0, j) : scaled;
}

/* Round at xhat, then weight: bf16(s r) gamma (vLLM's and Llama's order; RMSNorm). */
static inline float v2_y_xhat_rounded(const nc_call* c, int64_t j, float s, float mu, float r) {
  (void)mu;
  return v2_round_bf16(s * r) * v2_gamma(c, j);
}

typedef struct {
  int layernorm;            /* 1: LayerNorm (mean subtracted), 0: RMSNorm */
  v2_input_fn s;            /* the norm's input */
  v2_variance_fn variance;  /* the variance of s about mu */
  v2_output_fn y;
} v2_forward;

static inline int v2_row_finite(const nc_call* c, int64_t i) {
  if (!isfinite(c->eps)) return 0;
  for (int64_t j = 0; j < c->cols; ++j) {
    if (!isfinite(v2_get(&c->x, i, j))) return 0;
    if (c->residual.data && !isfinite(v2_get(&c->residual, i, j))) return 0;
    if (c->gamma.data && !isfinite(v2_get(&c->gamma, 0, j))) return 0;
    if (c->beta.data && !isfinite(v2_get(&c->beta, 0, j))) return 0;
  }
  return 1;
}

static inline void v2_run_forward(const nc_call* c, const v2_forward* f) {
  const float d = (float)c->cols;
  for (int64_t i = 0; i < c->rows; ++i) {
    if (c->residual_out.data)
      for (int64_t j = 0; j < c->cols; ++j) v2_put(&c->residual_out, i, j, v2_s_sum(c, i, j));
    float mu = 0.0f, r = NAN;
    if (v2_row_finite(c, i)) {
      mu = f->layernorm ? v2_row_sum(c, i, f->s) / d : 0.0f;
      r = 1.0f / sqrtf(f->variance(c, i, f->s, mu) + c->eps);
      if (c->y.data)
        for (int64_t j = 0; j < c->cols; ++j) v2_put(&c->y, i, j, f->y(c, j, f->s(c, i, j), mu, r));
    } else {
      mu = NAN;
      if (c->y.data)
        for (int64_t j = 0; j < c->cols; ++j) v2_put(&c->y, i, j, NAN);
    }
    if (c->mean.data && f->layernorm) v2_put(&c->mean, i, 0, mu);
    if (c->rstd.data) v2_put(&c->rstd, i, 0, r);
  }
}

/* ---- The backward from y (Apex's memory_efficient) ----
 *
 * The forward saved its output y and rstd (rrms), not x; the backward of one
 * row recovers xhat_j = (y_j - beta_j) / gamma_j (Apex divides by gamma_j
 * held at least eps away from zero, clamp_by_magnitude, which changes xhat_j
 * wherever |gamma_j| < eps: the broken twin V2_FROM_Y_CLAMPS_WEIGHT), and
 * with g_j = gamma_j dy_j:
 *   mean_g      = sum_j g_j / d                   (LayerNorm only)
 *   mean_g_xhat = sum_j dy_j (y_j - beta_j) / d    (= mean_j g_j xhat_j)
 *   dx_j        = rstd (g_j - mean_g - xhat_j mean_g_xhat)
 *   dgamma_j   += dy_j xhat_j,  dbeta_j += dy_j    (over the rows)
 * every operation in float, sums left to right. (Apex forms
 * (d g_j - sum_g - xhat_j sum_g_xhat) (rstd / d): one rounding more on the g
 * term, the scale's, than the plugins' default backward bound admits.) */

typedef float (*v2_xhat_fn)(const nc_call* c, int64_t i, int64_t j);

static inline float v2_beta(const nc_call* c, int64_t j) { return c->beta.data ? v2_get(&c->beta, 0, j) : 0.0f; }

static inline float v2_xhat_from_y(const nc_call* c, int64_t i, int64_t j) {
  return (v2_get(&c->y, i, j) - v2_beta(c, j)) / v2_gamma(c, j);
}

static inline void v2_run_backward_from_y(const nc_call* c, int layernorm, v2_xhat_fn xhat) {
  const float d = (float)c->cols;
  for (int64_t j = 0; j < c->cols; ++j) {
    if (c->dgamma.data) v2_put(&c->dgamma, 0, j, 0.0f);
    if (c->dbeta.data) v2_put(&c->dbeta, 0, j, 0.0f);
  }
  for (int64_t i = 0; i < c->rows; ++i) {
    float sum_g = 0.0f, sum_g_xhat = 0.0f;
    for (int64_t j = 0; j < c->cols; ++j) {
      const float dy = v2_get(&c->dy, i, j);
      sum_g += dy * v2_gamma(c, j);
      sum_g_xhat += dy * (v2_get(&c->y, i, j) - v2_beta(c, j));
    }
    const float mean_g = layernorm ? sum_g / d : 0.0f, mean_g_xhat = sum_g_xhat / d;
    const float rstd = v2_get(&c->rstd, i, 0);
    for (int64_t j = 0; j < c->cols; ++j) {
      const float dy = v2_get(&c->dy, i, j), xh = xhat(c, i, j);
      const float dx = rstd * (dy * v2_gamma(c, j) - mean_g - xh * mean_g_xhat);
      v2_put(&c->dx, i, j, dx);
      if (c->dgamma.data) v2_put(&c->dgamma, 0, j, v2_get(&c->dgamma, 0, j) + dy * xh);
      if (c->dbeta.data) v2_put(&c->dbeta, 0, j, v2_get(&c->dbeta, 0, j) + dy);
    }
  }
}

/* The exports of a plugin whose kernels are all version 2: an empty
   version-1 list and `list`, an array of nc_kernel_v2. */
#define V2_EXPORT_KERNELS(list)                                                 \
  static const nc_kernel v2_no_v1_kernels[1] = {{"", NC_LAYERNORM_FWD, NULL}};  \
  int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION_2; }            \
  const nc_kernel* normcheck_plugin_kernels(int* n) {                           \
    *n = 0;                                                                     \
    return v2_no_v1_kernels;                                                    \
  }                                                                             \
  const nc_kernel_v2* normcheck_plugin_kernels_v2(int* n) {                     \
    *n = (int)(sizeof(list) / sizeof((list)[0]));                               \
    return list;                                                                \
  }

#endif /* NORMCHECK_EXAMPLE_V2_COMMON_H */
