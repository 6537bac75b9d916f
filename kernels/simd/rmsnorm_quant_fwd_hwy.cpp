// rmsnorm_fwd.hwy_e4m3, rmsnorm_fwd.hwy_e4m3_token, rmsnorm_fwd.hwy_int8_token:
// the RMSNorm forward fused with the quantization of y to 8-bit codes, bf16 x,
// float32 gamma and rrms, rows at any stride (version-2 calls). y is
// rmsnorm_fwd.hwy_bf16's float32 y (rmsnorm_quant_fwd_hwy-inl.h), cast once:
// t = fl32(y fl32(1 / s)), fp8 e4m3fn saturating or int8, to nearest even.
// The scale is static (an input) or per token (each row's, from its largest
// |y|, written).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_quant_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/rmsnorm_quant_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void RmsNormQuantFwdHwy(const nc_call* c, QuantFormat format, const QuantRowParams* p) {
  const auto* gamma = static_cast<const float*>(c->gamma.data);
  WithStorage16(c->x.dtype == NC_F16 ? DType::f16 : DType::bf16, [&]<typename T>() {
    if (format == QuantFormat::e4m3) {
      QuantRows<QuantFormat::e4m3, T>(*c, gamma, *p);
    } else {
      QuantRows<QuantFormat::int8, T>(*c, gamma, *p);
    }
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <limits>

#include "normcheck/kernel.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormQuantFwdHwy);

// The row of spec *kSpec (its format and scale; e5m2 and block scales have
// no row here). A static row called without its scale (c->scale.data null:
// not a valid call, plugin.h) takes the scale as NaN: every code is NaN's
// (e4m3) or 0 (int8).
template <const OpSpec* kSpec>
void rmsnorm_quant_fwd_hwy(const nc_call* c) {
  // what quant_cast-inl.h and QuantRow compute: e4m3 saturating or int8 to
  // nearest even in [-128, 127], y * fl32(1 / s), one scale a row or a tensor
  constexpr Quantization kQ = *kSpec->quant;
  static_assert(kQ.cast == QuantCast{.format = kQ.cast.format} && kQ.cast.format != QuantFormat::e5m2);
  static_assert(kQ.apply == ScaleApply::inverse && !kQ.amax && kQ.scale != ScaleKind::per_block);
  if (c->rows <= 0 || c->cols <= 0) return;
  const Quantization& q = *kSpec->quant;
  QuantRowParams p;
  p.dynamic = q.dynamic();
  if (p.dynamic) {
    p.qmax = static_cast<float>(quant_max(q.cast.format));
    p.scale_ub = q.scale_ub;
    p.scale_min = q.scale_min;
  } else {
    const auto* s = static_cast<const float*>(c->scale.data);
    p.inv = s ? 1.0f / *s : std::numeric_limits<float>::quiet_NaN();
  }
  HWY_DYNAMIC_DISPATCH(RmsNormQuantFwdHwy)(c, q.cast.format, &p);
}

inline constexpr OpSpec kE4m3Spec = rmsnorm_quant_spec(QuantFormat::e4m3, ScaleKind::given, 0);
inline constexpr OpSpec kE4m3TokenSpec = rmsnorm_quant_spec(QuantFormat::e4m3, ScaleKind::per_token, kE4m3MinScale);
inline constexpr OpSpec kInt8TokenSpec = rmsnorm_quant_spec(QuantFormat::int8, ScaleKind::per_token, kInt8MinScale);

// The bound of y before the cast: y is rmsnorm_fwd.hwy_bf16's float32 y, by
// the same operations in the same order (pass 1's float64 sum of squares and
// r, y = fl32(fl32(x fl32(r)) gamma) where r is a normal float, the float64
// pass elsewhere), so the bound of that row's float32 pass,
// hwy_rmsnorm_fwd16_float_pass_bound (rmsnorm_fwd_hwy16.cpp), holds for it
// and for rrms; the bound of the float32 row, hwy_rmsnorm_fwd_bound, does not
// (it takes y in float64 from a float64 r). y's dtype is f32 in the spec:
// its rounding to y's format is the identity on the float the kernel holds,
// and the multiply by fl32(1 / s) and the cast that follow are the spec's
// declared stages, done exactly as declared (no other rounding to bound).
constexpr BoundFn kBound = &hwy_rmsnorm_fwd16_float_pass_bound;

constexpr Kernel quant_row(std::string_view name, std::string_view algorithm, SpecKernelFn fn,
                           const OpSpec* spec) {
  return Kernel{.name = name,
                .op = Op::rmsnorm_fwd,
                .origin = Origin::ours,
                .dtype = DType::bf16,
                .algorithm = algorithm,
                .fn = fn,
                .bound = kBound,
                // Finite rows: a row with NaN or inf gets NaN codes and a NaN scale
                // (rmsnorm_quant_fwd_hwy-inl.h), a choice no word of the spec states.
                .range = {.handles_nonfinite = false},
                .family = Family::highway,
                // y before the cast is rmsnorm_fwd.hwy_bf16's, whose float32 row this is
                .float32_counterpart = "rmsnorm_fwd.hwy",
                .spec = spec,
                .takes_row_stride = true};
}
}  // namespace simd

extern const Kernel kRmsNormFwdHwyE4m3;
constinit const Kernel kRmsNormFwdHwyE4m3 = simd::quant_row(
    "rmsnorm_fwd.hwy_e4m3",
    "bf16 x: rmsnorm_fwd.hwy_bf16's float32 y, times fl32(1 / s) for the static scale s, cast to e4m3fn "
    "(saturating, nearest even)",
    &simd::rmsnorm_quant_fwd_hwy<&simd::kE4m3Spec>, &simd::kE4m3Spec);

extern const Kernel kRmsNormFwdHwyE4m3Token;
constinit const Kernel kRmsNormFwdHwyE4m3Token = simd::quant_row(
    "rmsnorm_fwd.hwy_e4m3_token",
    "bf16 x: rmsnorm_fwd.hwy_bf16's float32 y; per row s = max(max|y| / 448, 1/(448*512)) in float32, "
    "written; y times fl32(1 / s) cast to e4m3fn (saturating, nearest even)",
    &simd::rmsnorm_quant_fwd_hwy<&simd::kE4m3TokenSpec>, &simd::kE4m3TokenSpec);

extern const Kernel kRmsNormFwdHwyInt8Token;
constinit const Kernel kRmsNormFwdHwyInt8Token = simd::quant_row(
    "rmsnorm_fwd.hwy_int8_token",
    "bf16 x: rmsnorm_fwd.hwy_bf16's float32 y; per row s = max(max|y| / 127, 2^-23) in float32, written; "
    "y times fl32(1 / s) rounded to nearest even, clamped to [-128, 127]",
    &simd::rmsnorm_quant_fwd_hwy<&simd::kInt8TokenSpec>, &simd::kInt8TokenSpec);

}  // namespace normcheck
#endif  // HWY_ONCE
