#include "plugin_bounds.h"

#include "normcheck/bounds.h"
#include "simd/hwy_bounds.h"

namespace normcheck::fuzz {
namespace {

// bf16: unit roundoff 2^-8, half the subnormal spacing 2^-134; f16: 2^-11 and
// 2^-25 (hwy_bounds.h).
template <Op op, DType dtype>
Bound sixteen_bit(const RowCondition& c) {
  const Bound b = default_bound(op)(c);
  return dtype == DType::bf16 ? simd::with_16bit_outputs(b, 0x1p-8, 0x1p-134)
                              : simd::with_16bit_outputs(b, 0x1p-11, 0x1p-25);
}

template <DType dtype>
BoundFn sixteen_bit_for(Op op) {
  switch (op) {
    case Op::layernorm_fwd: return &sixteen_bit<Op::layernorm_fwd, dtype>;
    case Op::layernorm_bwd: return &sixteen_bit<Op::layernorm_bwd, dtype>;
    case Op::rmsnorm_fwd: return &sixteen_bit<Op::rmsnorm_fwd, dtype>;
    case Op::rmsnorm_bwd: return &sixteen_bit<Op::rmsnorm_bwd, dtype>;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: return nullptr;  // float32 only, and not in the plugin ABI
  }
  return nullptr;
}

}  // namespace

BoundFn plugin_bound(Op op, DType dtype) {
  switch (dtype) {
    case DType::f32: return default_bound(op);
    case DType::bf16: return sixteen_bit_for<DType::bf16>(op);
    case DType::f16: return sixteen_bit_for<DType::f16>(op);
  }
  return default_bound(op);
}

}  // namespace normcheck::fuzz
