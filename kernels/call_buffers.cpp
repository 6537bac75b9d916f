#include "normcheck/call_buffers.h"

#include <cstdint>

namespace normcheck {
namespace {

bool is_backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }
bool is_layernorm(Op op) {
  return op == Op::layernorm_fwd || op == Op::layernorm_bwd || op == Op::layernorm_linear_fwd;
}

}  // namespace

std::vector<CallBuffer> call_buffers(const Kernel& k, const KernelArgs& a) {
  const Op op = k.op;
  const bool backward = is_backward(op), layernorm = is_layernorm(op), linear = is_norm_linear(op);
  const std::size_t storage = k.dtype == DType::f32 ? sizeof(float) : sizeof(uint16_t);
  const auto rows = static_cast<std::size_t>(a.rows), cols = static_cast<std::size_t>(a.cols);
  const auto features = static_cast<std::size_t>(a.out_features);
  std::vector<CallBuffer> buffers;
  const auto add = [&](std::string_view name, const void* p, std::size_t bytes, bool output, bool taken) {
    if (taken && p) buffers.push_back({name, bytes, output, const_cast<void*>(p)});
  };
  add("x", a.x, rows * cols * storage, false, true);
  add("dy", a.dy, rows * cols * storage, false, backward);
  add("out", a.out, linear ? rows * features * sizeof(float) : rows * cols * storage, true, true);
  add("gamma", a.gamma, cols * sizeof(float), false, true);
  add("beta", a.beta, cols * sizeof(float), false, layernorm && !backward);
  add("dgamma", a.dgamma, cols * sizeof(float), true, backward);
  add("dbeta", a.dbeta, cols * sizeof(float), true, backward && layernorm);
  add("saved_mean", a.saved_mean, rows * sizeof(float), false, backward && layernorm);
  add("saved_stat", a.saved_stat, rows * sizeof(float), false, backward);
  add("mean", a.mean, rows * sizeof(float), true, !backward && !linear && layernorm);
  add("stat", a.stat, rows * sizeof(float), true, !backward && !linear);
  add("weight", a.weight, features * cols * sizeof(float), false, linear);
  add("bias", a.bias, features * sizeof(float), false, linear);
  return buffers;
}

bool bind_call_buffer(KernelArgs& a, std::string_view name, void* data) {
  float* const f = static_cast<float*>(data);
  if (name == "x") a.x = data;
  else if (name == "dy") a.dy = data;
  else if (name == "out") a.out = data;
  else if (name == "gamma") a.gamma = f;
  else if (name == "beta") a.beta = f;
  else if (name == "dgamma") a.dgamma = f;
  else if (name == "dbeta") a.dbeta = f;
  else if (name == "saved_mean") a.saved_mean = f;
  else if (name == "saved_stat") a.saved_stat = f;
  else if (name == "mean") a.mean = f;
  else if (name == "stat") a.stat = f;
  else if (name == "weight") a.weight = f;
  else if (name == "bias") a.bias = f;
  else return false;
  return true;
}

}  // namespace normcheck
