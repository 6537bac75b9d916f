#include "plugin_abi.h"

#include <stdexcept>

namespace normcheck::host {

std::optional<Op> op_of(int op) {
  switch (op) {
    case NC_LAYERNORM_FWD: return Op::layernorm_fwd;
    case NC_LAYERNORM_BWD: return Op::layernorm_bwd;
    case NC_RMSNORM_FWD: return Op::rmsnorm_fwd;
    case NC_RMSNORM_BWD: return Op::rmsnorm_bwd;
    default: return std::nullopt;
  }
}

std::optional<DType> dtype_of(int dtype) {
  switch (dtype) {
    case NC_F32: return DType::f32;
    case NC_BF16: return DType::bf16;
    case NC_F16: return DType::f16;
    default: return std::nullopt;
  }
}

KernelFn typed_fn(Op op, DType dtype, void (*fn)(void)) {
  const bool f32 = dtype == DType::f32;
  switch (op) {
    case Op::layernorm_fwd:
      return f32 ? KernelFn(reinterpret_cast<nc_layernorm_fwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_layernorm_fwd16_fn>(fn));
    case Op::layernorm_bwd:
      return f32 ? KernelFn(reinterpret_cast<nc_layernorm_bwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_layernorm_bwd16_fn>(fn));
    case Op::rmsnorm_fwd:
      return f32 ? KernelFn(reinterpret_cast<nc_rmsnorm_fwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_rmsnorm_fwd16_fn>(fn));
    case Op::rmsnorm_bwd:
      return f32 ? KernelFn(reinterpret_cast<nc_rmsnorm_bwd_fn>(fn))
                 : KernelFn(reinterpret_cast<nc_rmsnorm_bwd16_fn>(fn));
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: break;  // not in the plugin ABI: op_of never returns them
  }
  throw std::logic_error("typed_fn: an op the plugin ABI does not have");
}

}  // namespace normcheck::host
