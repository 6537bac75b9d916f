/* A test plugin with a quantized RMSNorm (tests/tools/normcheck: the replay of
   a judge finding with `normcheck check --input case-NNN.finding.txt
   --plugin`), "rmsnorm fwd quant=int8 scale=static nan=clamp" on float32 rows:
   y = (x r) gamma in float32, t = y fl32(1 / s), the code of t to nearest
   even clamped to [-128, 127] (quant.int8_static), or clamped to [-127, 127]
   (quant.int8_static_clamp127, the twin judge_harness_quant.py --clamp-127
   computes). A NaN t is written as 0, as cvt.rni.sat.s8.f32 does (nan=clamp).
   Row strides are honoured; gamma NULL is weight 1. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <normcheck/plugin.h>

static void int8_static(const nc_call* c, float qmin) {
  const float* s = (const float*)c->scale.data;
  const float inverse = 1.0f / s[0];
  for (int64_t i = 0; i < c->rows; ++i) {
    const float* x = (const float*)c->x.data + i * c->x.row_stride;
    const float* g = (const float*)c->gamma.data;
    int8_t* y = (int8_t*)c->y.data + i * c->y.row_stride;
    float sum = 0;
    for (int64_t j = 0; j < c->cols; ++j) sum += x[j] * x[j];
    const float r = 1.0f / sqrtf(sum / (float)c->cols + c->eps);
    if (c->rstd.data) ((float*)c->rstd.data)[i * c->rstd.row_stride] = r;
    for (int64_t j = 0; j < c->cols; ++j) {
      const float v = (x[j] * r) * (g ? g[j] : 1.0f);
      float t = nearbyintf(v * inverse); /* to nearest even: the default rounding mode */
      t = isnan(t) ? 0 : t < qmin ? qmin : t > 127 ? 127 : t;
      y[j] = (int8_t)t;
    }
  }
}

static void good(const nc_call* c) { int8_static(c, -128); }
static void clamp127(const nc_call* c) { int8_static(c, -127); }

static const nc_kernel_v2 kernels[] = {
    {"quant.int8_static", "rmsnorm fwd quant=int8 scale=static nan=clamp", NULL, good},
    {"quant.int8_static_clamp127", "rmsnorm fwd quant=int8 scale=static nan=clamp", NULL, clamp127},
};
static const nc_kernel no_v1_kernels[1] = {{"", NC_LAYERNORM_FWD, NULL}};

int normcheck_plugin_abi(void) { return NORMCHECK_ABI_VERSION_2; }
const nc_kernel* normcheck_plugin_kernels(int* n) {
  *n = 0;
  return no_v1_kernels;
}
const nc_kernel_v2* normcheck_plugin_kernels_v2(int* n) {
  *n = (int)(sizeof(kernels) / sizeof(kernels[0]));
  return kernels;
}
