// rmsnorm_fwd.hwy_f16: RMSNorm forward with f16 (IEEE half) x and y (the same
// rows as rmsnorm_fwd.hwy: rmsnorm_fwd_hwy-inl.h, float64 math), y rounded to
// float32 and then to nearest even f16 (a y beyond the f16 range becomes
// +-inf). gamma and rrms stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_fwd_hwy_f16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormFwdHwyF16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                      int64_t rows, int64_t cols, float eps) {
  using f16 = hwy::float16_t;
  RmsNormFwdRows(reinterpret_cast<const f16*>(x), gamma, reinterpret_cast<f16*>(y), rrms, rows,
                 cols, eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwyF16);

void rmsnorm_fwd_hwy_f16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                         int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwyF16)(x, gamma, y, rrms, rows, cols, eps);
}

// The float32 row's bound holds for the float32 result v (its inputs are
// exact f16 values, which float32 holds), then y = fl16(v) (11 significant
// bits): |fl16(v) - v| <= 2^-11 |v| for a normal result (|v| >= 2^-14),
// <= 2^-25 (half the subnormal spacing 2^-24) below it (with_16bit_outputs,
// hwy_bounds.h; |y| <= |gamma xhat|, no beta). A |v| >= 65520 rounds to inf:
// no relative bound, evaluate() admits that infinity where the exact y +-
// allowance leaves the f16 range (docs/semantics.md). rrms stays float32.
Bound hwy_f16_rmsnorm_fwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_rmsnorm_fwd_bound(c), 0x1p-11, 0x1p-25);
}
}  // namespace simd

extern const Kernel kRmsNormFwdHwyF16;
constinit const Kernel kRmsNormFwdHwyF16{
    .name = "rmsnorm_fwd.hwy_f16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "rmsnorm_fwd.hwy's rows on f16 x/y (float64 math, y rounded to nearest even)",
    .fn = &simd::rmsnorm_fwd_hwy_f16,
    .bound = &simd::hwy_f16_rmsnorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
