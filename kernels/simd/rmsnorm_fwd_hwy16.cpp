// rmsnorm_fwd.hwy_bf16 and rmsnorm_fwd.hwy_f16: RMSNorm forward with 16-bit x
// and y, the rows of rmsnorm_fwd.hwy (rmsnorm_fwd_hwy-inl.h: r in float64,
// y = x r gamma in float32 when r is a normal float), y rounded to nearest
// even in the storage format (an f16 y beyond its range becomes +-inf).
// gamma and rrms stay float32.
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
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwy16);

// y in float32 before its rounding to the storage format, u = 2^-24. r64,
// the float64 r, and rrms = fl32(r64) are rmsnorm_fwd.hwy's, so
// r32 = fl32(r64) is off by stat_rel =: rho32 of its bound (r64 is a normal
// float's magnitude when this pass runs: no underflow in that rounding).
//   p = fl32(x r32) = x r32 (1 + d1) + e1, |d1| <= u, |e1| <= 2^-150 (p
//   subnormal), so |p - xhat| <= ((1 + rho32)(1 + u) - 1) |xhat| + 2^-150.
//   y = fl32(p gamma) = p gamma (1 + d2) + e2, |d2| <= u, |e2| <= 2^-150:
//   |y - gamma xhat| <= |gamma| |p - xhat| (1 + u) + u |gamma xhat| + 2^-150.
// As Bound: xhat_rel = ((1 + rho32)(1 + u) - 1)(1 + u), xhat_abs = 2^-150
// (1 + u), affine_rel = u, underflow_abs = 2^-150; without gamma y = p, which
// this covers. Rows whose r64 is not a normal float take the float64 pass,
// whose bound is below this one in every term (its xhat_rel has 2^-53 where
// this has u).
Bound hwy_rmsnorm_fwd16_float_pass_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  Bound b = hwy_rmsnorm_fwd_bound(c);
  b.xhat_rel = ((1 + b.stat_rel) * (1 + u) - 1) * (1 + u);
  b.xhat_abs = kUnderflowUnit * (1 + u);
  b.affine_rel = u;
  b.underflow_abs = kUnderflowUnit;
  return b;
}

template <DType kStorage>
void rmsnorm_fwd_hwy16(const uint16_t* x, const float* gamma, uint16_t* y, float* rrms,
                       int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwy16)(kStorage, x, gamma, y, rrms, rows, cols, eps);
}
}  // namespace simd

// Bounds: hwy_rmsnorm_fwd16_float_pass_bound's, for y in float32 before its rounding to the
// storage format; the rounding itself is the spec's last stage, which the
// admissible range takes exactly (spec_policy.h).
extern const Kernel kRmsNormFwdHwyBf16;
constinit const Kernel kRmsNormFwdHwyBf16{
    .name = "rmsnorm_fwd.hwy_bf16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::bf16,
    .algorithm = "bf16 x/y: float64 sum of squares and r, y = x r gamma in float32 (float64 "
                 "where r is not a normal float), rounded to nearest even",
    .fn = &simd::rmsnorm_fwd_hwy16<DType::bf16>,
    .bound = &simd::hwy_rmsnorm_fwd16_float_pass_bound,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

extern const Kernel kRmsNormFwdHwyF16;
constinit const Kernel kRmsNormFwdHwyF16{
    .name = "rmsnorm_fwd.hwy_f16",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f16,
    .algorithm = "f16 x/y: float64 sum of squares and r, y = x r gamma in float32 (float64 "
                 "where r is not a normal float), rounded to nearest even",
    .fn = &simd::rmsnorm_fwd_hwy16<DType::f16>,
    .bound = &simd::hwy_rmsnorm_fwd16_float_pass_bound,
    .family = Family::highway,
    .float32_counterpart = "rmsnorm_fwd.hwy",
};

}  // namespace normcheck
#endif  // HWY_ONCE
