// layernorm_fwd.hwy_add[_1pg][_bf16|_f16]: a residual add fused in front of
// the LayerNorm forward with bias (ONNX Runtime's SkipLayerNormalization: y
// and the sum residual_out), weight gamma or fl32(1 + gamma)
// (TransformerEngine's zero_centered_gamma), float32, bf16 or f16 storage,
// rows at any stride (version-2 calls). The norm reads the stored sum
// (round=sum:T, fused_add_norm_fwd_hwy-inl.h) with layernorm_fwd.hwy's row
// (layernorm_fwd_hwy-inl.h: float32 centred sums about a float64 prefix mean,
// the float64 row where no float32 centre is near enough), y rounded once to
// T. The admissible range of the spec is built from the row's own bound
// (spec_policy.h), layernorm_fwd.hwy's on the stored sum.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/fused_add_layernorm_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/fused_add_norm_fwd_hwy-inl.h"
#include "simd/hwy_bounds.h"
#include "simd/layernorm_fwd_hwy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void FusedAddLayerNormFwdHwy(const nc_call* c, const float* weight) {
  const auto* beta = static_cast<const float*>(c->beta.data);
  // FastRow's values as layernorm_fwd.hwy's rows choose them: a fast row's
  // input is finite (its sums were), so a NaN reaches y only through the
  // weight or beta
  const auto finite = [&] {
    const auto n = static_cast<size_t>(c->cols);
    return AllFinite(weight, n) && AllFinite(beta, n);
  };
  WithStorage(c->x.dtype, [&]<typename T>() {
    WithValues<T>(finite, [&]<Values kValues>() {
      FusedAddRows<T>(*c, [&]<bool kSplit>(const T* s, T* y, float* mean, float* rstd, bool stream) {
        FastRow<kSplit, kValues>(s, weight, beta, y, mean, rstd, c->cols, c->eps, stream, RowsAhead<T>{});
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
HWY_EXPORT(FusedAddLayerNormFwdHwy);

template <Weight kWeight>
void fused_add_layernorm_fwd_hwy(const nc_call* c) {
  if (c->rows <= 0 || c->cols <= 0) return;
  std::vector<float> buffer;
  HWY_DYNAMIC_DISPATCH(FusedAddLayerNormFwdHwy)(c, weight_of(*c, kWeight, buffer));
}

// layernorm_fwd.hwy's bound on the stored sum (fused_add_bound), 16-bit
// storage too: the rows compute y in float32 from inputs float32 holds
// exactly and round it once to T, which is the range's own rounding (as
// layernorm_fwd.hwy_bf16's bound says).
template <Weight kWeight, DType kStorage>
constexpr BoundFn kLnBound = &fused_add_bound<&hwy_layernorm_fwd_bound, kWeight>;

constexpr std::string_view kAlgorithm =
    "Highway SIMD: s = x + residual in float32 stored in T, the norm reads the stored s; layernorm_fwd.hwy's "
    "row on it (float32 sums centred on a float64 prefix mean, y rounded once); threaded over rows or chunks";
constexpr std::string_view kAlgorithm1pg =
    "as layernorm_fwd.hwy_add, weight fl32(1 + gamma) (zero-centred gamma)";
}  // namespace simd

NORMCHECK_FUSED_ADD_ROWS(LayerNorm, "layernorm_fwd", NormKind::layernorm, simd::fused_add_layernorm_fwd_hwy, simd::kLnBound, simd::kAlgorithm,
                         simd::kAlgorithm1pg)

}  // namespace normcheck
#endif  // HWY_ONCE
