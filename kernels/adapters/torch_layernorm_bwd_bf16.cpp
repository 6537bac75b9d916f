// libtorch's at::native_layer_norm_backward (CPU) on bf16 tensors, called as
// autograd calls it for a bf16 nn.LayerNorm: dy, x, the weight and bias in
// bf16, and the saved mean and rstd as libtorch 1.13's bf16 forward returns
// them (bf16, rows x 1). libtorch allocates dx, dgamma and dbeta in bf16;
// they are copied into the caller's tensors. A version-2 call (nc_call): the
// row's spec (torch_rows.cpp) gives every tensor's format, and a tensor in
// another format is a wiring fault, thrown. Rows may be strided (libtorch
// makes x and dy contiguous itself). Threads: OpenMP's default
// (use_openmp_default_threads, torch_tensors.h); libtorch's per-thread bf16
// partial sums of dgamma and dbeta make the result depend on their number.
// Part of libnormcheck_torch.so; its row is in torch_rows.cpp.
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/core/InferenceMode.h>
#include <ATen/ops/native_layer_norm_backward.h>

#include "normcheck/plugin.h"
#include "torch_tensors.h"

namespace normcheck::torch_adapter {
namespace {

// The bf16 tensor of `t` (rows x cols at its row stride), or a throw naming it
// when the call passes another format.
at::Tensor bf16_view(const nc_tensor& t, const char* name) {
  if (t.dtype != NC_BF16)
    throw std::invalid_argument(std::string("layernorm_bwd.torch_bf16: ") + name + " is not bf16 (nc_dtype " +
                                std::to_string(t.dtype) + ")");
  return at::from_blob(t.data, {t.rows, t.cols}, {t.row_stride, 1}, at::TensorOptions().dtype(at::kBFloat16));
}

// n copies of `value` in bf16, in a per-thread buffer the adapter only reads.
at::Tensor bf16_constant(std::vector<at::BFloat16>& buffer, int64_t n, float value) {
  if (buffer.size() != static_cast<std::size_t>(n)) buffer.assign(static_cast<std::size_t>(n), at::BFloat16(value));
  return at::from_blob(buffer.data(), {n}, at::TensorOptions().dtype(at::kBFloat16));
}

}  // namespace

void torch_layernorm_bwd_bf16(const nc_call* c) {
  const int64_t rows = c->rows, cols = c->cols;
  if (rows <= 0 || cols <= 0) return;
  torch_adapter::use_openmp_default_threads();
  c10::InferenceMode no_autograd;
  // As in torch_layernorm_bwd.cpp: libtorch shapes dgamma like the weight and
  // dbeta like the bias (bf16 both, as the module's parameters are), so both
  // are passed whenever their gradient is asked for; without gamma the
  // weight is ones.
  thread_local std::vector<at::BFloat16> ones, zeros;
  c10::optional<at::Tensor> weight;
  if (c->gamma.data)
    weight = bf16_view(c->gamma, "gamma").reshape({cols});
  else if (c->dgamma.data)
    weight = bf16_constant(ones, cols, 1.0f);
  c10::optional<at::Tensor> bias;
  if (c->dbeta.data) bias = bf16_constant(zeros, cols, 0.0f);
  const int64_t normalized_shape[] = {cols};
  const std::array<bool, 3> output_mask = {c->dx.data != nullptr, c->dgamma.data != nullptr,
                                           c->dbeta.data != nullptr};
  const auto [dx, dgamma, dbeta] = at::native_layer_norm_backward(
      bf16_view(c->dy, "dy"), bf16_view(c->x, "x"), normalized_shape, bf16_view(c->mean, "mean"),
      bf16_view(c->rstd, "rstd"), weight, bias, output_mask);
  if (c->dx.data) bf16_view(c->dx, "dx").copy_(dx);
  if (c->dgamma.data) bf16_view(c->dgamma, "dgamma").copy_(dgamma.reshape({1, cols}));
  if (c->dbeta.data) bf16_view(c->dbeta, "dbeta").copy_(dbeta.reshape({1, cols}));
}

}  // namespace normcheck::torch_adapter
