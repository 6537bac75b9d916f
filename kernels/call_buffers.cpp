#include "normcheck/call_buffers.h"

#include <cstdint>

#include "normcheck/op_spec.h"

namespace normcheck {
namespace {

std::size_t bytes_of(DType t) { return t == DType::f32 ? sizeof(float) : sizeof(uint16_t); }

}  // namespace

std::vector<CallBuffer> call_buffers(const Kernel& k, const KernelArgs& a) {
  const OpSpec s = spec_of(k);
  const bool fwd = s.direction == Direction::fwd;
  const auto rows = static_cast<std::size_t>(a.rows), cols = static_cast<std::size_t>(a.cols);
  const auto features = static_cast<std::size_t>(a.out_features);
  // rows x cols at the call's row stride: the last row ends at its last element
  const std::size_t matrix = rows == 0 ? 0 : (rows - 1) * static_cast<std::size_t>(a.stride()) + cols;
  const auto size = [&](TensorName t) { return bytes_of(s.dtype_of(t)); };
  std::vector<CallBuffer> buffers;
  const auto add = [&](std::string_view name, const void* p, std::size_t bytes, bool output, bool taken) {
    if (taken && p) buffers.push_back({name, bytes, output, const_cast<void*>(p)});
  };
  add("x", a.x, matrix * size(TensorName::x), false, s.has(TensorName::x));
  add("dy", a.dy, matrix * size(TensorName::dy), false, !fwd);
  add("residual", a.residual, matrix * size(TensorName::residual), false, s.has(TensorName::residual));
  add("out", a.out,
      s.linear  ? rows * features * sizeof(float)
      : s.quant ? matrix  // one byte per code
                : matrix * size(fwd ? TensorName::y : TensorName::dx),
      true, true);
  if (s.quant) {
    const bool given = !s.quant->dynamic();
    add("scale", a.scale, given ? sizeof(float) : rows * static_cast<std::size_t>(scales_per_row(*s.quant, a.cols)) * sizeof(float),
        !given, true);
    add("scale_inv", a.scale_inv, sizeof(float), true, s.quant->apply == ScaleApply::multiply);
    add("amax", a.amax, sizeof(float), true, s.quant->amax);
  }
  add("residual_out", a.residual_out, matrix * size(TensorName::residual_out), true, s.has(TensorName::residual_out));
  add("gamma", a.gamma, cols * size(TensorName::gamma), false, s.has(TensorName::gamma));
  add("beta", a.beta, cols * size(TensorName::beta), false, s.has(TensorName::beta));
  add("dgamma", a.dgamma, cols * size(TensorName::dgamma), true, s.has(TensorName::dgamma));
  add("dbeta", a.dbeta, cols * size(TensorName::dbeta), true, s.has(TensorName::dbeta));
  add("saved_mean", a.saved_mean, rows * size(TensorName::mean), false, !fwd && s.has(TensorName::mean));
  add("saved_stat", a.saved_stat, rows * size(TensorName::stat), false, !fwd && s.has(TensorName::stat));
  add("saved_y", a.saved_y, matrix * size(TensorName::y), false, !fwd && s.has(TensorName::y));
  add("mean", a.mean, rows * size(TensorName::mean), true, fwd && s.has(TensorName::mean));
  add("stat", a.stat, rows * size(TensorName::stat), true, fwd && s.has(TensorName::stat));
  add("weight", a.weight, features * cols * sizeof(float), false, s.linear);
  add("bias", a.bias, features * sizeof(float), false, s.linear);
  return buffers;
}

bool bind_call_buffer(KernelArgs& a, std::string_view name, void* data) {
  float* const f = static_cast<float*>(data);
  if (name == "x") a.x = data;
  else if (name == "dy") a.dy = data;
  else if (name == "residual") a.residual = data;
  else if (name == "out") a.out = data;
  else if (name == "residual_out") a.residual_out = data;
  else if (name == "gamma") a.gamma = data;
  else if (name == "beta") a.beta = data;
  else if (name == "dgamma") a.dgamma = data;
  else if (name == "dbeta") a.dbeta = data;
  else if (name == "saved_mean") a.saved_mean = data;
  else if (name == "saved_stat") a.saved_stat = data;
  else if (name == "saved_y") a.saved_y = data;
  else if (name == "mean") a.mean = data;
  else if (name == "scale") a.scale = data;
  else if (name == "scale_inv") a.scale_inv = data;
  else if (name == "amax") a.amax = data;
  else if (name == "stat") a.stat = data;
  else if (name == "weight") a.weight = f;
  else if (name == "bias") a.bias = f;
  else return false;
  return true;
}

}  // namespace normcheck
