// rmsnorm_fwd.hwy_add[_1pg][_bf16|_f16]: a residual add fused in front of the
// RMSNorm forward (vLLM's fused_add_rms_norm, with y = s r w and the sum
// residual_out), w = gamma or fl32(1 + gamma) (Gemma's RMSNorm), float32, bf16
// or f16 storage, rows at any stride (version-2 calls). The norm reads the
// stored sum (round=sum:T, fused_add_norm_fwd_hwy-inl.h) with rmsnorm_fwd.hwy's
// row (rmsnorm_fwd_hwy-inl.h: float64 sum of squares; y in float64 for float32
// storage, in float32 for 16-bit storage where r is a normal float).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/fused_add_rmsnorm_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/fused_add_norm_fwd_hwy-inl.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void FusedAddRmsNormFwdHwy(const nc_call* c, const float* weight) {
  // RmsRow's values as rmsnorm_fwd.hwy's rows choose them (RmsNormFwdRows):
  // the stored sum is finite inside the domain, so a NaN reaches y only
  // through the weight
  const auto finite = [&] { return AllFinite(weight, static_cast<size_t>(c->cols)); };
  WithStorage(c->x.dtype, [&]<typename T>() {
    WithValues<T>(finite, [&]<Values kValues>() {
      FusedAddRows<T>(*c, [&]<bool kSplit>(const T* s, T* y, float*, float* rrms, bool stream) {
        RmsRow<kSplit, kValues, T>(s, weight, y, rrms, c->cols, c->eps, stream, nullptr);
      });
    });
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "simd/fused_add_norm.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(FusedAddRmsNormFwdHwy);

template <Weight kWeight>
void fused_add_rmsnorm_fwd_hwy(const nc_call* c) {
  if (c->rows <= 0 || c->cols <= 0) return;
  std::vector<float> buffer;
  HWY_DYNAMIC_DISPATCH(FusedAddRmsNormFwdHwy)(c, weight_of(*c, kWeight, buffer));
}

// Float32 storage: rmsnorm_fwd.hwy's bound; 16-bit: its float32 pass's
// (rmsnorm_fwd_hwy16.cpp), each on the stored sum (fused_add_bound).
template <Weight kWeight, DType kStorage>
constexpr BoundFn kRmsBound =
    &fused_add_bound<kStorage == DType::f32 ? &hwy_rmsnorm_fwd_bound : &hwy_rmsnorm_fwd16_float_pass_bound,
                     kWeight>;

constexpr std::string_view kAlgorithm =
    "Highway SIMD: s = x + residual in float32 stored in T, the norm reads the stored s; rmsnorm_fwd.hwy's "
    "row on it (float64 sum of squares); threaded over rows or chunks";
constexpr std::string_view kAlgorithm1pg =
    "as rmsnorm_fwd.hwy_add, weight fl32(1 + gamma) (Gemma)";
}  // namespace simd

NORMCHECK_FUSED_ADD_ROWS(RmsNorm, "rmsnorm_fwd", NormKind::rmsnorm, simd::fused_add_rmsnorm_fwd_hwy, simd::kRmsBound, simd::kAlgorithm,
                         simd::kAlgorithm1pg)

}  // namespace normcheck
#endif  // HWY_ONCE
