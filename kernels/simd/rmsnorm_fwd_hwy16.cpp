// rmsnorm_fwd.hwy_bf16 and rmsnorm_fwd.hwy_f16: RMSNorm forward with 16-bit x
// and y, the rows of rmsnorm_fwd.hwy (rmsnorm_fwd_hwy-inl.h, float64 math),
// y rounded to float32 and then to nearest even in the storage format (an
// f16 y beyond its range becomes +-inf). gamma and rrms stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_fwd_hwy16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormFwdHwy16(DType storage, const uint16_t* x, const float* gamma, uint16_t* y,
                     float* rrms, int64_t rows, int64_t cols, float eps) {
  WithStorage16(storage, [&]<typename T>() {
    RmsNormFwdRows(As16<T>(x), gamma, As16<T>(y), rrms, rows, cols, eps);
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwy16);

template <DType kStorage>
void rmsnorm_fwd_hwy16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                       int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwy16)(kStorage, x, gamma, y, rrms, rows, cols, eps);
}
}  // namespace simd

// Bounds: rmsnorm_fwd.hwy's, then y's rounding to the storage format
// (with_16bit_outputs, hwy_bounds.h; |y| <= |gamma xhat|, no beta).
extern const Kernel kRmsNormFwdHwyBf16;
constinit const Kernel kRmsNormFwdHwyBf16{
    .name = "rmsnorm_fwd.hwy_bf16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "rmsnorm_fwd.hwy's rows on bf16 x/y (float64 math, y rounded to nearest even)",
    .fn = &simd::rmsnorm_fwd_hwy16<DType::bf16>,
    .bound = &simd::bound_16bit<&simd::hwy_rmsnorm_fwd_bound, DType::bf16>,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

extern const Kernel kRmsNormFwdHwyF16;
constinit const Kernel kRmsNormFwdHwyF16{
    .name = "rmsnorm_fwd.hwy_f16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "rmsnorm_fwd.hwy's rows on f16 x/y (float64 math, y rounded to nearest even)",
    .fn = &simd::rmsnorm_fwd_hwy16<DType::f16>,
    .bound = &simd::bound_16bit<&simd::hwy_rmsnorm_fwd_bound, DType::f16>,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
