#include "normcheck/bounds.h"
#include "normcheck/float_format.h"
#include "simd/hwy_bounds.h"

namespace normcheck {
namespace {

// One more rounding to the 16-bit format (hwy_bounds.h): its unit roundoff
// (bf16 2^-8, f16 2^-11) and half its subnormal spacing (2^-134, 2^-25).
template <Op op, DType dtype>
Bound sixteen_bit(const RowCondition& c) {
  return simd::with_16bit_outputs(default_bound(op)(c), dtype);
}

template <DType dtype>
BoundFn sixteen_bit_for(Op op) {
  switch (op) {
    case Op::layernorm_fwd: return &sixteen_bit<Op::layernorm_fwd, dtype>;
    case Op::layernorm_bwd:
      return dtype == DType::bf16 ? &default_layernorm_bwd_bf16_bound : &sixteen_bit<Op::layernorm_bwd, dtype>;
    case Op::rmsnorm_fwd: return &sixteen_bit<Op::rmsnorm_fwd, dtype>;
    case Op::rmsnorm_bwd: return &sixteen_bit<Op::rmsnorm_bwd, dtype>;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: return nullptr;  // float32 only, and not in the plugin ABI
  }
  return nullptr;
}

}  // namespace

Bound default_layernorm_bwd_bf16_bound(const RowCondition& c) {
  return sixteen_bit<Op::layernorm_bwd, DType::bf16>(c);
}

BoundFn plugin_bound(Op op, DType dtype) {
  // a forward output's rounding to its format is its spec's last stage, which
  // the admissible range takes exactly (spec_policy.h): the float32 bound
  if (op == Op::layernorm_fwd || op == Op::rmsnorm_fwd) return default_bound(op);
  switch (dtype) {
    case DType::f32: return default_bound(op);
    case DType::bf16: return sixteen_bit_for<DType::bf16>(op);
    case DType::f16: return sixteen_bit_for<DType::f16>(op);
  }
  return default_bound(op);
}

}  // namespace normcheck
