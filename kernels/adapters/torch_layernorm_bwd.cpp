// libtorch's at::native_layer_norm_backward (CPU, float) as a row of the
// kernel table. dy, x, gamma and the saved mean/rstd are viewed in place (no
// copy in); libtorch allocates dx, dgamma and dbeta, which are copied into the
// caller's arrays. Threads: OpenMP's default
// (see use_openmp_default_threads in torch_tensors.h).
// Part of libnormcheck_torch.so; its row is in torch_rows.cpp.
#include <array>
#include <string>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <ATen/ops/native_layer_norm_backward.h>

#include "normcheck/kernel.h"
#include "element_count.h"
#include "torch_tensors.h"

namespace normcheck::torch_adapter {

void torch_layernorm_bwd(const float* dy, const float* x, const float* gamma,
                         const float* mean, const float* rstd, float* dx, float* dgamma,
                         float* dbeta, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  torch_adapter::use_openmp_default_threads();
  c10::InferenceMode no_autograd;
  // libtorch shapes dgamma like the weight and dbeta like the bias, so it needs
  // both tensors whenever their gradient is asked for, even though the backward
  // reads neither the bias nor (when the caller had no gamma) a weight of ones.
  thread_local std::vector<float> ones, zeros;
  c10::optional<at::Tensor> weight;
  if (gamma)
    weight = view(gamma, {cols});
  else if (dgamma)
    weight = torch_adapter::constant(ones, cols, 1.0f);
  c10::optional<at::Tensor> bias;
  if (dbeta) bias = torch_adapter::constant(zeros, cols, 0.0f);
  const int64_t normalized_shape[] = {cols};
  const std::array<bool, 3> output_mask = {true, dgamma != nullptr, dbeta != nullptr};
  const auto [out_dx, out_dgamma, out_dbeta] = at::native_layer_norm_backward(
      view(dy, {rows, cols}), view(x, {rows, cols}), normalized_shape, view(mean, {rows, 1}),
      view(rstd, {rows, 1}), weight, bias, output_mask);
  view(dx, {rows, cols}).copy_(out_dx);
  if (dgamma) view(dgamma, {cols}).copy_(out_dgamma);
  if (dbeta) view(dbeta, {cols}).copy_(out_dbeta);
}

// libtorch takes every float shape whose size fits its int64 element count.
std::string torch_bwd_declines(const Shape& shape) {
  return adapters::element_count_declines(shape, "libtorch");
}

}  // namespace normcheck::torch_adapter
