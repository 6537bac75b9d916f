#include "normcheck/invoke.h"

#include <stdexcept>
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
  switch (k.op) {
    case Op::layernorm_fwd:
      function_of<Fwd>(k)(in<T>(a.x), a.gamma, a.beta, out<T>(a.out), a.mean, a.stat, a.rows, a.cols, a.eps);
      return;
    case Op::layernorm_bwd:
      function_of<Bwd>(k)(in<T>(a.dy), in<T>(a.x), a.gamma, a.saved_mean, a.saved_stat, out<T>(a.out),
                          a.dgamma, a.dbeta, a.rows, a.cols);
      return;
    case Op::rmsnorm_fwd:
      function_of<RmsFwd>(k)(in<T>(a.x), a.gamma, out<T>(a.out), a.stat, a.rows, a.cols, a.eps);
      return;
    case Op::rmsnorm_bwd:
      function_of<RmsBwd>(k)(in<T>(a.dy), in<T>(a.x), a.gamma, a.saved_stat, out<T>(a.out), a.dgamma,
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
    function_of<LayerNormLinearFwdFn>(k)(in<float>(a.x), a.gamma, a.beta, a.weight, a.bias, out<float>(a.out),
                                         a.rows, a.cols, a.out_features, a.eps);
  else
    function_of<RmsNormLinearFwdFn>(k)(in<float>(a.x), a.gamma, a.weight, a.bias, out<float>(a.out), a.rows,
                                       a.cols, a.out_features, a.eps);
}

}  // namespace

void invoke(const Kernel& kernel, const KernelArgs& args) {
  if (const auto* remote = std::get_if<RemoteKernelFn>(&kernel.fn)) {
    if (!remote->call)
      throw std::logic_error("invoke: kernel " + std::string(kernel.name) + " is remote but has no call");
    remote->call(remote->context, kernel, args);
  } else if (is_norm_linear(kernel.op))
    call_norm_linear(kernel, args);
  else if (kernel.dtype == DType::f32)
    call<float, nc_layernorm_fwd_fn, nc_layernorm_bwd_fn, nc_rmsnorm_fwd_fn, nc_rmsnorm_bwd_fn>(kernel, args);
  else
    call<uint16_t, LayerNormFwd16Fn, LayerNormBwd16Fn, RmsNormFwd16Fn, RmsNormBwd16Fn>(kernel, args);
}

}  // namespace normcheck
