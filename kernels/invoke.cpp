#include "normcheck/invoke.h"

#include <stdexcept>
#include "normcheck/op_spec.h"
#include <string>
#include <variant>

namespace normcheck {
namespace {

// The row's fn as Fn, the type its op and dtype call for.
template <class Fn>
Fn function_of(const Kernel& k) {
  const Fn* fn = std::get_if<Fn>(&k.fn);
  if (!fn || !*fn)
    throw std::logic_error("invoke: kernel " + std::string(k.name) + " (" + std::string(to_string(k.op)) +
                           ", " + std::string(to_string(k.dtype)) +
                           "): its function does not have the type of its op and dtype");
  return *fn;
}

// The storage arrays as float (f32) or 16-bit bit patterns (bf16, f16).
template <class T>
const T* in(const void* p) { return static_cast<const T*>(p); }
template <class T>
T* out(void* p) { return static_cast<T*>(p); }

template <class T, class Fwd, class Bwd, class RmsFwd, class RmsBwd>
void call(const Kernel& k, const KernelArgs& a) {
  const float* gamma = in<float>(a.gamma);
  switch (k.op) {
    case Op::layernorm_fwd:
      function_of<Fwd>(k)(in<T>(a.x), gamma, in<float>(a.beta), out<T>(a.out), out<float>(a.mean),
                          out<float>(a.stat), a.rows, a.cols, a.eps);
      return;
    case Op::layernorm_bwd:
      function_of<Bwd>(k)(in<T>(a.dy), in<T>(a.x), gamma, in<float>(a.saved_mean), in<float>(a.saved_stat),
                          out<T>(a.out), out<float>(a.dgamma), out<float>(a.dbeta), a.rows, a.cols);
      return;
    case Op::rmsnorm_fwd:
      function_of<RmsFwd>(k)(in<T>(a.x), gamma, out<T>(a.out), out<float>(a.stat), a.rows, a.cols, a.eps);
      return;
    case Op::rmsnorm_bwd:
      function_of<RmsBwd>(k)(in<T>(a.dy), in<T>(a.x), gamma, in<float>(a.saved_stat), out<T>(a.out), out<float>(a.dgamma),
                             a.rows, a.cols);
      return;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: break;  // float32 only: invoke() calls them itself
  }
  throw std::logic_error("invoke: kernel " + std::string(k.name) + " has an unknown op");
}

// A norm followed by a Linear (float32 only; the row's fn type says so).
void call_norm_linear(const Kernel& k, const KernelArgs& a) {
  if (k.op == Op::layernorm_linear_fwd)
    function_of<LayerNormLinearFwdFn>(k)(in<float>(a.x), in<float>(a.gamma), in<float>(a.beta), a.weight, a.bias,
                                         out<float>(a.out), a.rows, a.cols, a.out_features, a.eps);
  else
    function_of<RmsNormLinearFwdFn>(k)(in<float>(a.x), in<float>(a.gamma), a.weight, a.bias, out<float>(a.out),
                                       a.rows, a.cols, a.out_features, a.eps);
}

nc_dtype abi_dtype(DType t) { return t == DType::f32 ? NC_F32 : t == DType::bf16 ? NC_BF16 : NC_F16; }

// A version-2 kernel: the arrays of `a` as the tensors of an nc_call, each in
// its spec's format and shape; a tensor the spec does not have, or a null
// array, is passed with data null.
void call_v2(const Kernel& k, const KernelArgs& a) {
  const OpSpec s = spec_of(k);
  const bool fwd = s.direction == Direction::fwd;
  nc_call c{};
  c.size = sizeof(nc_call);
  c.rows = a.rows, c.cols = a.cols, c.eps = a.eps;
  const auto tensor = [&](nc_tensor& t, TensorName name, const void* data, int64_t rows, int64_t cols,
                          int64_t stride) {
    if (!s.has(name) || !data) return;
    t = {const_cast<void*>(data), abi_dtype(s.dtype_of(name)), rows, cols, stride};
  };
  const int64_t stride = a.stride();
  tensor(c.x, TensorName::x, a.x, a.rows, a.cols, stride);
  tensor(c.residual, TensorName::residual, a.residual, a.rows, a.cols, stride);
  tensor(c.gamma, TensorName::gamma, a.gamma, 1, a.cols, a.cols);
  tensor(c.beta, TensorName::beta, a.beta, 1, a.cols, a.cols);
  tensor(c.dy, TensorName::dy, a.dy, a.rows, a.cols, stride);
  tensor(c.y, TensorName::y, fwd ? a.out : a.saved_y, a.rows, a.cols, stride);
  if (s.quant) {  // y holds codes; the scale is one float (static) or the kernel's, per row or block
    constexpr nc_dtype kCodes[] = {NC_E4M3, NC_E5M2, NC_I8};
    c.y.dtype = kCodes[static_cast<int>(s.quant->cast.format)];
    const int64_t per_row = scales_per_row(*s.quant, a.cols);
    if (a.scale)
      c.scale = s.quant->dynamic() ? nc_tensor{a.scale, NC_F32, a.rows, per_row, per_row}
                                   : nc_tensor{a.scale, NC_F32, 1, 1, 1};
    if (a.scale_inv && s.quant->apply == ScaleApply::multiply) c.scale_inv = {a.scale_inv, NC_F32, 1, 1, 1};
    if (a.amax && s.quant->amax) c.amax = {a.amax, NC_F32, 1, 1, 1};
  }
  tensor(c.residual_out, TensorName::residual_out, a.residual_out, a.rows, a.cols, stride);
  tensor(c.mean, TensorName::mean, fwd ? a.mean : a.saved_mean, a.rows, 1, 1);
  tensor(c.rstd, TensorName::stat, fwd ? a.stat : a.saved_stat, a.rows, 1, 1);
  tensor(c.dx, TensorName::dx, fwd ? nullptr : a.out, a.rows, a.cols, stride);
  tensor(c.dgamma, TensorName::dgamma, a.dgamma, 1, a.cols, a.cols);
  tensor(c.dbeta, TensorName::dbeta, a.dbeta, 1, a.cols, a.cols);
  function_of<SpecKernelFn>(k)(&c);
}

}  // namespace

void invoke(const Kernel& kernel, const KernelArgs& args) {
  const bool v2 = std::holds_alternative<SpecKernelFn>(kernel.fn);
  if (args.stride() != args.cols && !v2 && !std::holds_alternative<RemoteKernelFn>(kernel.fn))
    throw std::logic_error("invoke: kernel " + std::string(kernel.name) +
                           " takes contiguous rows only (row_stride " + std::to_string(args.row_stride) + ")");
  if (const auto* remote = std::get_if<RemoteKernelFn>(&kernel.fn)) {
    if (!remote->call)
      throw std::logic_error("invoke: kernel " + std::string(kernel.name) + " is remote but has no call");
    remote->call(remote->context, kernel, args);
  } else if (v2)
    call_v2(kernel, args);
  else if (is_norm_linear(kernel.op))
    call_norm_linear(kernel, args);
  else if (kernel.dtype == DType::f32)
    call<float, nc_layernorm_fwd_fn, nc_layernorm_bwd_fn, nc_rmsnorm_fwd_fn, nc_rmsnorm_bwd_fn>(kernel, args);
  else
    call<uint16_t, LayerNormFwd16Fn, LayerNormBwd16Fn, RmsNormFwd16Fn, RmsNormBwd16Fn>(kernel, args);
}

}  // namespace normcheck
