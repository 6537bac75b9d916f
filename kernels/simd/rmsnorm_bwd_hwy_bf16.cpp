// rmsnorm_bwd.hwy_bf16: RMSNorm backward with bf16 dy, x and dx, float32 math
// (rmsnorm_bwd_hwy-inl.h), dx rounded to nearest even bf16; gamma, the saved
// rrms and dgamma stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_bwd_hwy_bf16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormBwdHwyBf16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                       const float* rrms, uint16_t* dx, float* dgamma, int64_t rows,
                       int64_t cols) {
  using bf16 = hwy::bfloat16_t;
  RmsNormBwdRows(reinterpret_cast<const bf16*>(dy), reinterpret_cast<const bf16*>(x), gamma, rrms,
                 reinterpret_cast<bf16*>(dx), dgamma, rows, cols);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormBwdHwyBf16);

void rmsnorm_bwd_hwy_bf16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                          const float* rrms, uint16_t* dx, float* dgamma, int64_t rows,
                          int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormBwdHwyBf16)(dy, x, gamma, rrms, dx, dgamma, rows, cols);
}

// The float32 bound (the inputs are exact bf16 values), then dx's rounding to
// bf16: unit 2^-8, half the subnormal spacing 2^-134 (with_16bit_outputs,
// hwy_bounds.h; |dx| <= r (|g| + |xhat| mean|g xhat|), inside the scales it
// widens). dgamma stays float32 and keeps its bound.
Bound hwy_bf16_rmsnorm_bwd_bound(const RowCondition& c) {
  return with_16bit_outputs(hwy_rmsnorm_bwd_bound(c), 0x1p-8, 0x1p-134);
}
}  // namespace simd

extern const Kernel kRmsNormBwdHwyBf16;
constinit const Kernel kRmsNormBwdHwyBf16{
    .name = "rmsnorm_bwd.hwy_bf16",
    .op = Op::rmsnorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "rmsnorm_bwd.hwy's rows on bf16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::rmsnorm_bwd_hwy_bf16,
    .bound = &simd::hwy_bf16_rmsnorm_bwd_bound,
    // As rmsnorm_bwd.hwy: the saved rrms stays normal. bf16 has float's
    // exponent range, so its values reach past 2^124.
    .range = {.max_abs_x = 0x1p124},
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_bwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
