// layernorm_fwd.hwy_f16: LayerNorm forward with f16 (IEEE half) x and y,
// float32 math (the same rows as layernorm_fwd.hwy: layernorm_fwd_hwy-inl.h),
// y rounded to nearest even f16 (a y beyond the f16 range becomes +-inf).
// gamma, beta, mean, rstd stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_hwy_f16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/layernorm_fwd_hwy-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdHwyF16(const uint16_t* x_bits, const float* gamma, const float* beta,
                        uint16_t* y_bits, float* mean, float* rstd, int64_t rows, int64_t cols,
                        float eps) {
  for_each_layernorm_fwd_row([]<bool kSplit>(auto... row_args) { FastRow<kSplit>(row_args...); },
                             reinterpret_cast<const hwy::float16_t*>(x_bits), gamma, beta,
                             reinterpret_cast<hwy::float16_t*>(y_bits), mean, rstd, rows, cols,
                             eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormFwdHwyF16);

void layernorm_fwd_hwy_f16(const uint16_t* x, const float* gamma, const float* beta, uint16_t* y,
                           float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormFwdHwyF16)(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

// The float32 row's bound (its inputs are exact f16 values, which float32
// holds), then y's rounding to f16 (11 significant bits): |fl16(v) - v| <=
// 2^-11 |v| for a normal result (|v| >= 2^-14), <= 2^-25 (half the subnormal
// spacing 2^-24) below it. A |v| >= 65520 rounds to inf: no relative bound,
// evaluate() admits that infinity where the exact y +- allowance leaves the
// f16 range (docs/semantics.md).
Bound hwy_f16_layernorm_fwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_layernorm_fwd_bound(c), 0x1p-11, 0x1p-25);
}
}  // namespace simd

extern const Kernel kLayerNormFwdHwyF16;
constinit const Kernel kLayerNormFwdHwyF16{
    .name = "layernorm_fwd.hwy_f16",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "layernorm_fwd.hwy's rows on f16 x/y (float32 math, y rounded to nearest even)",
    .fn = &simd::layernorm_fwd_hwy_f16,
    .bound = &simd::hwy_f16_layernorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "layernorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
