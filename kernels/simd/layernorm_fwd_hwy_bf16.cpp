// layernorm_fwd.hwy_bf16: LayerNorm forward with bf16 x and y, float32 math
// (the same rows as layernorm_fwd.hwy: layernorm_fwd_hwy-inl.h), y rounded to
// nearest even bf16. gamma, beta, mean, rstd stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_hwy_bf16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_fwd_hwy-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdHwyBf16(const uint16_t* x_bits, const float* gamma, const float* beta,
                         uint16_t* y_bits, float* mean, float* rstd, int64_t rows, int64_t cols,
                         float eps) {
  for_each_layernorm_fwd_row([]<bool kSplit>(auto... row_args) { FastRow<kSplit>(row_args...); },
                             reinterpret_cast<const hwy::bfloat16_t*>(x_bits), gamma, beta,
                             reinterpret_cast<hwy::bfloat16_t*>(y_bits), mean, rstd, rows, cols,
                             eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormFwdHwyBf16);

void layernorm_fwd_hwy_bf16(const uint16_t* x, const float* gamma, const float* beta,
                            uint16_t* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                            float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormFwdHwyBf16)(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

// The float32 row's bound (its inputs are exact bf16 values), then y's
// rounding to bf16: unit 2^-8, half the subnormal spacing 2^-134.
Bound hwy_bf16_layernorm_fwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_layernorm_fwd_bound(c), 0x1p-8, 0x1p-134);
}
}  // namespace simd

extern const Kernel kLayerNormFwdHwyBf16;
constinit const Kernel kLayerNormFwdHwyBf16{
    .name = "layernorm_fwd.hwy_bf16",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "layernorm_fwd.hwy's rows on bf16 x/y (float32 math, y rounded to nearest even)",
    .fn = &simd::layernorm_fwd_hwy_bf16,
    .bound = &simd::hwy_bf16_layernorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "layernorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
