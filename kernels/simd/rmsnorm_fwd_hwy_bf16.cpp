// rmsnorm_fwd.hwy_bf16: RMSNorm forward with bf16 x and y (the same rows as
// rmsnorm_fwd.hwy: rmsnorm_fwd_hwy-inl.h, float64 math), y rounded to float32
// and then to nearest even bf16. gamma and rrms stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_fwd_hwy_bf16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormFwdHwyBf16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                       int64_t rows, int64_t cols, float eps) {
  using bf16 = hwy::bfloat16_t;
  RmsNormFwdRows(reinterpret_cast<const bf16*>(x), gamma, reinterpret_cast<bf16*>(y), rrms, rows,
                 cols, eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwyBf16);

void rmsnorm_fwd_hwy_bf16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                          int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwyBf16)(x, gamma, y, rrms, rows, cols, eps);
}

// The float32 row's bound holds for the float32 result v (its inputs are
// exact bf16 values, which float32 holds), then y = fl16(v) adds unit |v|
// plus half the subnormal spacing: unit 2^-8, half_spacing 2^-134
// (with_16bit_outputs, hwy_bounds.h; |y| <= |gamma xhat|, no beta). rrms
// stays float32 and keeps its bound.
Bound hwy_bf16_rmsnorm_fwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_rmsnorm_fwd_bound(c), 0x1p-8, 0x1p-134);
}
}  // namespace simd

extern const Kernel kRmsNormFwdHwyBf16;
constinit const Kernel kRmsNormFwdHwyBf16{
    .name = "rmsnorm_fwd.hwy_bf16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "rmsnorm_fwd.hwy's rows on bf16 x/y (float64 math, y rounded to nearest even)",
    .fn = &simd::rmsnorm_fwd_hwy_bf16,
    .bound = &simd::hwy_bf16_rmsnorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
