// layernorm_fwd.hwy_bf16 and layernorm_fwd.hwy_f16: LayerNorm forward with
// 16-bit x and y, the rows of layernorm_fwd.hwy (layernorm_fwd_hwy-inl.h,
// float32 math), y rounded to nearest even in the storage format (an f16 y
// beyond its range becomes +-inf). gamma, beta, mean and rstd stay float32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_hwy16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_fwd_hwy-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdHwy16(DType storage, const uint16_t* x, const float* gamma, const float* beta,
                       uint16_t* y, float* mean, float* rstd, int64_t rows, int64_t cols,
                       float eps) {
  // A fast row's x is finite (its sums were): an input NaN can reach y only
  // through gamma or beta.
  const auto finite = [&] {
    const size_t n = static_cast<size_t>(cols);
    return AllFinite(gamma, n) && AllFinite(beta, n);
  };
  WithStorage16(storage, [&]<typename T>() {
    WithValues<T>(finite, [&]<Values kValues>() {
      for_each_layernorm_fwd_row(
          []<bool kSplit>(auto... row_args) { FastRow<kSplit, kValues>(row_args...); },
          As16<T>(x), gamma, beta, As16<T>(y), mean, rstd, rows, cols, eps);
    });
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormFwdHwy16);

template <DType kStorage>
void layernorm_fwd_hwy16(const uint16_t* x, const float* gamma, const float* beta, uint16_t* y,
                         float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormFwdHwy16)(kStorage, x, gamma, beta, y, mean, rstd, rows, cols, eps);
}
}  // namespace simd

// Bounds: layernorm_fwd.hwy's, for y in float32 before its rounding to the
// storage format (the 16-bit inputs are exact in float32, so the float32 rows'
// bound holds for that y); the rounding itself is the spec's last stage, which
// the admissible range takes exactly (spec_policy.h).
extern const Kernel kLayerNormFwdHwyBf16;
constinit const Kernel kLayerNormFwdHwyBf16{
    .name = "layernorm_fwd.hwy_bf16",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "layernorm_fwd.hwy's rows on bf16 x/y (float32 math, y rounded to nearest even)",
    .fn = &simd::layernorm_fwd_hwy16<DType::bf16>,
    .bound = &simd::hwy_layernorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "layernorm_fwd.hwy",
};

extern const Kernel kLayerNormFwdHwyF16;
constinit const Kernel kLayerNormFwdHwyF16{
    .name = "layernorm_fwd.hwy_f16",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "layernorm_fwd.hwy's rows on f16 x/y (float32 math, y rounded to nearest even)",
    .fn = &simd::layernorm_fwd_hwy16<DType::f16>,
    .bound = &simd::hwy_layernorm_fwd_bound,
    .family = Family::highway,
    .float32_counterpart = "layernorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
