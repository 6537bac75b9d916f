// layernorm_bwd.hwy_f16: LayerNorm backward with f16 (IEEE half) dy, x and
// dx, float32 math (layernorm_bwd_hwy-inl.h), dx rounded to nearest even f16
// (a dx beyond the f16 range becomes +-inf); gamma, the saved statistics,
// dgamma and dbeta stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_bwd_hwy_f16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/layernorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormBwdHwyF16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                        const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                        float* dbeta, int64_t rows, int64_t cols) {
  using f16 = hwy::float16_t;
  LayerNormBwdRows(reinterpret_cast<const f16*>(dy), reinterpret_cast<const f16*>(x), gamma, mean,
                   rstd, reinterpret_cast<f16*>(dx), dgamma, dbeta, rows, cols);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormBwdHwyF16);

void layernorm_bwd_hwy_f16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                           const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                           float* dbeta, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormBwdHwyF16)(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
}

// The float32 bound (the inputs are exact f16 values), then dx's rounding to
// f16 as in layernorm_fwd.hwy_f16: unit 2^-11, half the subnormal spacing
// 2^-25; an overflow to inf is judged by evaluate() as there.
Bound hwy_f16_layernorm_bwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_layernorm_bwd_bound(c), 0x1p-11, 0x1p-25);
}
}  // namespace simd

extern const Kernel kLayerNormBwdHwyF16;
constinit const Kernel kLayerNormBwdHwyF16{
    .name = "layernorm_bwd.hwy_f16",
    .op = Op::layernorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm =
        "layernorm_bwd.hwy's rows on f16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::layernorm_bwd_hwy_f16,
    .bound = &simd::hwy_f16_layernorm_bwd_bound,
    // No input range: layernorm_bwd.hwy's |x| <= 2^124 (saved rstd normal,
    // x - mean finite) holds for every f16 value (|x| <= 65504); larger
    // floats are stored as inf.,
    .family = Family::highway,
    .float32_counterpart = "layernorm_bwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
