// libtorch's at::native_layer_norm (CPU, float) as a row of the kernel table.
// x, gamma and beta are viewed in place (from_blob, no copy in); libtorch
// allocates its own y, mean and rstd, which are copied into the caller's arrays
// (its public API has no way to write into the caller's memory directly, so the
// copy is part of what using libtorch costs). Threads: OpenMP's default
// (see use_openmp_default_threads in torch_tensors.h for why not libtorch's
// own default).
#include <string>

#include <c10/core/InferenceMode.h>
#include <ATen/ops/native_layer_norm.h>

#include "normcheck/bounds.h"
#include "normcheck/kernel.h"
#include "element_count.h"
#include "torch_tensors.h"

namespace normcheck {
namespace {

using torch_adapter::view;

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

Bound torch_fwd_bound(const RowCondition& c) { return default_bound(Op::layernorm_fwd)(c); }

}  // namespace

// Its Welford moments multiply deviations from the running mean, so like a
// two-pass sum of squares they stay finite while max|x| <= 2^62 / sqrt(d)
// (the range of the scalar pytorch_form kernel, which reimplements them).
extern const Kernel kTorchLayerNormFwd;
constinit const Kernel kTorchLayerNormFwd{
    .name = "layernorm_fwd.torch",
    .op = Op::layernorm_fwd,
    .origin = Origin::third_party,
    .dtype = DType::f32,
    .algorithm = "libtorch 1.13 at::native_layer_norm (CPU): float mean and variance by "
                 "vectorized Welford (RowwiseMoments), rstd = 1/sqrt(max(var,0)+eps), "
                 "y = (x*rstd - mean*rstd)*gamma + beta",
    .fn = &torch_layernorm_fwd,
    .bound = &torch_fwd_bound,
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
    .declines = &torch_fwd_declines,
    .family = Family::libtorch,
};

}  // namespace normcheck
