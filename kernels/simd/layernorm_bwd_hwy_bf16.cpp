// layernorm_bwd.hwy_bf16: LayerNorm backward with bf16 dy, x and dx, float32
// math (layernorm_bwd_hwy-inl.h), dx rounded to nearest even bf16; gamma,
// the saved statistics, dgamma and dbeta stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_bwd_hwy_bf16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormBwdHwyBf16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                         const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                         float* dbeta, int64_t rows, int64_t cols) {
  using bf16 = hwy::bfloat16_t;
  LayerNormBwdRows(reinterpret_cast<const bf16*>(dy), reinterpret_cast<const bf16*>(x), gamma,
                   mean, rstd, reinterpret_cast<bf16*>(dx), dgamma, dbeta, rows, cols);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormBwdHwyBf16);

void layernorm_bwd_hwy_bf16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                            const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                            float* dbeta, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormBwdHwyBf16)(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows,
                                            cols);
}

// The float32 bound (the inputs are exact bf16 values), then dx's rounding to
// bf16: unit 2^-8, half the subnormal spacing 2^-134.
Bound hwy_bf16_layernorm_bwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_layernorm_bwd_bound(c), 0x1p-8, 0x1p-134);
}
}  // namespace simd

extern const Kernel kLayerNormBwdHwyBf16;
constinit const Kernel kLayerNormBwdHwyBf16{
    .name = "layernorm_bwd.hwy_bf16",
    .op = Op::layernorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "layernorm_bwd.hwy's rows on bf16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::layernorm_bwd_hwy_bf16,
    .bound = &simd::hwy_bf16_layernorm_bwd_bound,
    // As layernorm_bwd.hwy: the saved rstd stays normal and x - mean cannot
    // overflow. bf16 has float's exponent range: x = 1.5 2^127 followed by
    // 100 of -1.5 2^127 (normal rstd) overflowed x - mean, giving a NaN dx.
    .range = {.max_abs_x = 0x1p124},
    .family = Family::highway,
    .float32_counterpart = "layernorm_bwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
