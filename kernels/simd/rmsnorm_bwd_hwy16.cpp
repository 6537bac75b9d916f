// rmsnorm_bwd.hwy_bf16 and rmsnorm_bwd.hwy_f16: RMSNorm backward with 16-bit
// dy, x and dx, the rows of rmsnorm_bwd.hwy (rmsnorm_bwd_hwy-inl.h, float32
// math), dx rounded to nearest even in the storage format (an f16 dx beyond
// its range becomes +-inf). gamma, the saved rrms and dgamma stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_bwd_hwy16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormBwdHwy16(DType storage, const uint16_t* dy, const uint16_t* x, const float* gamma,
                     const float* rrms, uint16_t* dx, float* dgamma, int64_t rows, int64_t cols) {
  WithStorage16(storage, [&]<typename T>() {
    RmsNormBwdRows(As16<T>(dy), As16<T>(x), gamma, rrms, As16<T>(dx), dgamma, rows, cols);
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormBwdHwy16);

template <DType kStorage>
void rmsnorm_bwd_hwy16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                       const float* rrms, uint16_t* dx, float* dgamma, int64_t rows,
                       int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormBwdHwy16)(kStorage, dy, x, gamma, rrms, dx, dgamma, rows, cols);
}
}  // namespace simd

// Bounds: rmsnorm_bwd.hwy's, then dx's rounding to the storage format
// (with_16bit_outputs, hwy_bounds.h; |dx| <= r (|g| + |xhat| mean|g xhat|),
// inside the scales it widens). dgamma stays float32 and keeps its bound.
extern const Kernel kRmsNormBwdHwyBf16;
constinit const Kernel kRmsNormBwdHwyBf16{
    .name = "rmsnorm_bwd.hwy_bf16",
    .op = Op::rmsnorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "rmsnorm_bwd.hwy's rows on bf16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::rmsnorm_bwd_hwy16<DType::bf16>,
    .bound = &simd::bound_16bit<&simd::hwy_rmsnorm_bwd_bound, DType::bf16>,
    // As rmsnorm_bwd.hwy: the saved rrms stays normal. bf16 has float's
    // exponent range, so its values reach past 2^124.
    .range = {.max_abs_x = 0x1p124},
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_bwd.hwy",
};

extern const Kernel kRmsNormBwdHwyF16;
constinit const Kernel kRmsNormBwdHwyF16{
    .name = "rmsnorm_bwd.hwy_f16",
    .op = Op::rmsnorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "rmsnorm_bwd.hwy's rows on f16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::rmsnorm_bwd_hwy16<DType::f16>,
    .bound = &simd::bound_16bit<&simd::hwy_rmsnorm_bwd_bound, DType::f16>,
    // No input range: rmsnorm_bwd.hwy's |x| <= 2^124 (saved rrms normal)
    // holds for every f16 value (|x| <= 65504); larger floats are stored as inf.
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_bwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
