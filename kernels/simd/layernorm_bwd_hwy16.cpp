// layernorm_bwd.hwy_bf16 and layernorm_bwd.hwy_f16: LayerNorm backward with
// 16-bit dy, x and dx, the rows of layernorm_bwd.hwy (layernorm_bwd_hwy-inl.h,
// float32 math), dx rounded to nearest even in the storage format (an f16 dx
// beyond its range becomes +-inf). gamma, the saved statistics, dgamma and
// dbeta stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_bwd_hwy16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_bwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormBwdHwy16(DType storage, const uint16_t* dy, const uint16_t* x, const float* gamma,
                       const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                       float* dbeta, int64_t rows, int64_t cols) {
  WithStorage16(storage, [&]<typename T>() {
    LayerNormBwdRows(As16<T>(dy), As16<T>(x), gamma, mean, rstd, As16<T>(dx), dgamma, dbeta, rows,
                     cols);
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormBwdHwy16);

template <DType kStorage>
void layernorm_bwd_hwy16(const uint16_t* dy, const uint16_t* x, const float* gamma,
                         const float* mean, const float* rstd, uint16_t* dx, float* dgamma,
                         float* dbeta, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormBwdHwy16)(kStorage, dy, x, gamma, mean, rstd, dx, dgamma, dbeta,
                                          rows, cols);
}
}  // namespace simd

// Bounds: layernorm_bwd.hwy's, then dx's rounding to the storage format
// (with_16bit_outputs, hwy_bounds.h).
extern const Kernel kLayerNormBwdHwyBf16;
constinit const Kernel kLayerNormBwdHwyBf16{
    .name = "layernorm_bwd.hwy_bf16",
    .op = Op::layernorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "layernorm_bwd.hwy's rows on bf16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::layernorm_bwd_hwy16<DType::bf16>,
    .bound = &simd::bound_16bit<&simd::hwy_layernorm_bwd_bound, DType::bf16>,
    // As layernorm_bwd.hwy: the saved rstd stays normal and x - mean cannot
    // overflow. bf16 has float's exponent range: x = 1.5 2^127 followed by
    // 100 of -1.5 2^127 (normal rstd) overflowed x - mean, giving a NaN dx.
    .range = {.max_abs_x = 0x1p124},
    .family = Family::highway,
    .float32_counterpart = "layernorm_bwd.hwy",
};

extern const Kernel kLayerNormBwdHwyF16;
constinit const Kernel kLayerNormBwdHwyF16{
    .name = "layernorm_bwd.hwy_f16",
    .op = Op::layernorm_bwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm =
        "layernorm_bwd.hwy's rows on f16 dy/x/dx (float32 math, dx rounded to nearest even)",
    .fn = &simd::layernorm_bwd_hwy16<DType::f16>,
    .bound = &simd::bound_16bit<&simd::hwy_layernorm_bwd_bound, DType::f16>,
    // No input range: layernorm_bwd.hwy's |x| <= 2^124 (saved rstd normal,
    // x - mean finite) holds for every f16 value (|x| <= 65504); larger
    // floats are stored as inf.
    .family = Family::highway,
    .float32_counterpart = "layernorm_bwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
