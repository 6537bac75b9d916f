// What the fused residual add + norm kernels (fused_add_rmsnorm_fwd_hwy.cpp,
// fused_add_layernorm_fwd_hwy.cpp; the row algorithm in
// fused_add_norm_fwd_hwy-inl.h) share outside the per-target code: their
// spec, their weight, their bound and their table row.
#pragma once

#include <string_view>
#include <vector>

#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/plugin.h"
#include "simd/hwy_bounds.h"

namespace normcheck::simd {

// The spec of a fused kernel on storage t: x, residual, y and residual_out
// in t; weight (gamma or 1 + gamma), beta (LayerNorm), mean, rstd / rrms in
// float32; the norm reads the sum it stores, round=sum:t (fused_add_norm_fwd_hwy-inl.h
// says why).
constexpr OpSpec fused_add_spec(NormKind norm, DType t, Weight weight) {
  OpSpec s;
  s.norm = norm;
  s.add = true;
  s.weight = weight;
  s.bias = norm == NormKind::layernorm;
  // the activations, as the text form's dtype=t sets them (dy and dx too, which a forward has not)
  for (const TensorName n : {TensorName::x, TensorName::residual, TensorName::y, TensorName::residual_out,
                             TensorName::dy, TensorName::dx})
    s.dtype[static_cast<std::size_t>(n)] = t;
  s.round[static_cast<std::size_t>(RoundingPoint::sum)] = t;
  return s;
}

// The weight a kernel of `weight` multiplies by: gamma itself, or
// fl32(1 + gamma_j) formed in `buffer` once per call; null without gamma
// (weight 1).
const float* weight_of(const nc_call& c, Weight weight, std::vector<float>& buffer);

// A bound b that holds with the weight w exactly, when the kernel multiplies
// by w' = fl32(w) = w (1 + d), |d| <= u = 2^-24 instead (1 + gamma rounded):
// y^ is within b of w' xhat + beta with w' in place of w, |w'| <= (1 + u) |w|,
// and |w' xhat - w xhat| <= u |w xhat|. So the xhat terms grow by (1 + u) and
// affine_rel by (1 + u) plus u (|w xhat| <= |w xhat| + |beta|).
Bound with_rounded_weight(Bound b);

// The bound of a fused kernel: kNorm, the bound of its norm's row (the plain
// kernel's) on its input, the stored sum s, which is the policy's own value
// at its rounding point `sum` (so RowCondition is that of s); then the
// rounded weight (1 + gamma). It stops before y's rounding to its format:
// that is the spec's last stage, which the admissible range takes exactly
// (verify/spec_policy.cpp).
template <Bound (*kNorm)(const RowCondition&), Weight kWeight>
Bound fused_add_bound(const RowCondition& c) {
  Bound b = kNorm(c);
  return kWeight == Weight::one_plus_gamma ? with_rounded_weight(b) : b;
}

// The largest |x| and |residual| of a fused kernel on storage t: the sum of
// two such values, 2^127 (65504 for f16), is finite in t. A sum that
// overflows hands the norm an infinity the inputs did not hold, where the
// kernel's row gives its row-NaN outputs and the policy's IEEE evaluation
// rrms = 0: outside the declared domain (the generators draw the residual
// within the same limit as x).
constexpr double fused_add_max_abs(DType t) { return t == DType::f16 ? 32752.0 : 0x1p126; }

// The spec of each fused row, one per norm, weight and storage format: what
// the rows' Kernel::spec points at.
template <NormKind kNorm, Weight kWeight, DType kStorage>
inline constexpr OpSpec kFusedAddSpec = fused_add_spec(kNorm, kStorage, kWeight);

// The table row of a fused kernel (Kernel::spec set, rows at any stride); a
// 16-bit row names the float32 row of its weight (Kernel::float32_counterpart).
constexpr Kernel fused_add_row(std::string_view name, NormKind norm, DType t, std::string_view algorithm,
                               SpecKernelFn fn, BoundFn bound, const OpSpec* spec,
                               std::string_view float32_counterpart) {
  return Kernel{.name = name,
                .op = norm == NormKind::rmsnorm ? Op::rmsnorm_fwd : Op::layernorm_fwd,
                .origin = Origin::ours,
                .dtype = t,
                .algorithm = algorithm,
                .fn = fn,
                .bound = bound,
                .range = {.max_abs_x = fused_add_max_abs(t)},
                .family = Family::highway,
                .float32_counterpart = t == DType::f32 ? std::string_view() : float32_counterpart,
                .spec = spec,
                .takes_row_stride = true};
}

}  // namespace normcheck::simd

// The six rows of one fused norm (namespace normcheck): k<Name>FwdHwyAdd and
// ...Add1pg (weight 1 + gamma), each for float32, bf16 (suffix Bf16) and f16
// (F16), named "<prefix>.hwy_add[_1pg][_bf16|_f16]"; fn<kWeight> is the
// SpecKernelFn of a weight, bound<kWeight, kStorage> the BoundFn of a row.
#define NORMCHECK_FUSED_ADD_ROW(row, name, norm, t, weight, fn, bound, algorithm, f32_row)              \
  extern const Kernel row;                                                                          \
  constinit const Kernel row = simd::fused_add_row(name, norm, t, algorithm, &fn<weight>, bound<weight, t>, \
                                                   &simd::kFusedAddSpec<norm, weight, t>, f32_row);
#define NORMCHECK_FUSED_ADD_ROWS(Name, prefix, norm, fn, bound, algorithm, algorithm_1pg)                    \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAdd, prefix ".hwy_add", norm, DType::f32, Weight::gamma, fn, bound,  \
                          algorithm, "")                                                                   \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAddBf16, prefix ".hwy_add_bf16", norm, DType::bf16, Weight::gamma,   \
                          fn, bound, algorithm, prefix ".hwy_add")                                         \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAddF16, prefix ".hwy_add_f16", norm, DType::f16, Weight::gamma, fn,  \
                          bound, algorithm, prefix ".hwy_add")                                             \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAdd1pg, prefix ".hwy_add_1pg", norm, DType::f32,                     \
                          Weight::one_plus_gamma, fn, bound, algorithm_1pg, "")                            \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAdd1pgBf16, prefix ".hwy_add_1pg_bf16", norm, DType::bf16,           \
                          Weight::one_plus_gamma, fn, bound, algorithm_1pg, prefix ".hwy_add_1pg")         \
  NORMCHECK_FUSED_ADD_ROW(k##Name##FwdHwyAdd1pgF16, prefix ".hwy_add_1pg_f16", norm, DType::f16,              \
                          Weight::one_plus_gamma, fn, bound, algorithm_1pg, prefix ".hwy_add_1pg")
