// libtorch's at::native_layer_norm (CPU, float) as a row of the kernel table.
// x, gamma and beta are viewed in place (from_blob, no copy in); libtorch
// allocates its own y, mean and rstd, which are copied into the caller's arrays
// (its public API has no way to write into the caller's memory directly, so the
// copy is part of what using libtorch costs). Threads: OpenMP's default
// (see use_openmp_default_threads in torch_tensors.h for why not libtorch's
// own default).
// Part of libnormcheck_torch.so; its row is in torch_rows.cpp.
#include <string>

#include <c10/core/InferenceMode.h>
#include <ATen/ops/native_layer_norm.h>

#include "normcheck/kernel.h"
#include "element_count.h"
#include "torch_tensors.h"

namespace normcheck::torch_adapter {

void torch_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  // No autograd bookkeeping: this is a plain forward evaluation.
  torch_adapter::use_openmp_default_threads();
  c10::InferenceMode no_autograd;
  const c10::optional<at::Tensor> weight =
      gamma ? c10::optional<at::Tensor>(view(gamma, {cols})) : c10::nullopt;
  const c10::optional<at::Tensor> bias =
      beta ? c10::optional<at::Tensor>(view(beta, {cols})) : c10::nullopt;
  const int64_t normalized_shape[] = {cols};
  const auto [out, out_mean, out_rstd] =
      at::native_layer_norm(view(x, {rows, cols}), normalized_shape, weight, bias, eps);
  view(y, {rows, cols}).copy_(out);
  if (mean) view(mean, {rows}).copy_(out_mean.reshape({rows}));
  if (rstd) view(rstd, {rows}).copy_(out_rstd.reshape({rows}));
}

// libtorch takes every float shape whose size fits its int64 element count.
std::string torch_fwd_declines(const Shape& shape) {
  return adapters::element_count_declines(shape, "libtorch");
}

}  // namespace normcheck::torch_adapter
