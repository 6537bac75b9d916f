// What the quantized RMSNorm forward rows (rmsnorm_quant_fwd_hwy.cpp; the
// row algorithm in rmsnorm_quant_fwd_hwy-inl.h) share outside the per-target
// code: their spec and the scale parameters of a call.
#pragma once

#include <cstddef>
#include <limits>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"

namespace normcheck::simd {

// How a call scales y before the cast (op_spec.h, Quantization).
struct QuantRowParams {
  bool dynamic = false;  // scale=token: each row's scale from its largest |y_i|
  float inv = 0;         // scale=static: fl32(1 / s), formed once per call
  // scale=token: s = max(fl32(min(a, scale_ub) / qmax), scale_min)
  float qmax = 0;
  float scale_ub = std::numeric_limits<float>::infinity();
  float scale_min = 0;
};

// The smallest per-token scale of the rows, as vLLM's fused RMSNorm + dynamic
// quantization takes it (min_scaling_factor in its quantization kernels):
// fp8, fl32(1 / (448 * 512)); int8, FLT_EPSILON = 2^-23. Either keeps the
// scale of an all-zero row positive: s = scale_min, inv finite, every t 0
// (codes +0), where scale_min = 0 would give s = 0, inv = inf and
// t = 0 * inf = NaN (e4m3's NaN code; int8's 0) with a zero scale a consumer
// divides by.
constexpr float kE4m3MinScale = 1.0f / (448.0f * 512.0f);
constexpr float kInt8MinScale = std::numeric_limits<float>::epsilon();

// The spec of a quantized row: x in bf16 (the text's dtype=bf16), y's value
// before the cast in float32 (y=f32: the kernel casts the float32 y it
// computes, one rounding), gamma and rrms float32, y cast to `format` after
// y * fl32(1 / s) (scale_apply=inverse), fp8 saturating, int8 ties to even
// in [-128, 127]. A NaN y casts to e4m3's NaN code, and to int8's 0 (as
// cvt.rni.sat.s8.f32 does), which the int8 spec declares: nan=clamp.
constexpr OpSpec rmsnorm_quant_spec(QuantFormat format, ScaleKind scale, float scale_min) {
  OpSpec s;
  s.norm = NormKind::rmsnorm;
  s.bias = false;
  for (const TensorName n : {TensorName::x, TensorName::residual, TensorName::y, TensorName::residual_out,
                             TensorName::dy, TensorName::dx})
    s.dtype[static_cast<std::size_t>(n)] = DType::bf16;
  s.dtype[static_cast<std::size_t>(TensorName::y)] = DType::f32;
  Quantization q;
  q.cast.format = format;
  q.scale = scale;
  q.scale_min = scale_min;
  q.nan_clamp = format == QuantFormat::int8;
  s.quant = q;
  return s;
}

}  // namespace normcheck::simd
