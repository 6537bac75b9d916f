// libnormcheck_torch.so's entry: the libtorch adapters (float32 forward and
// backward, bf16 backward) as an AdapterModule
// (adapter_module.h), and libtorch's seeded normal generator for the claims
// (A3 regenerates seed 002's torch.randn input). The module links libtorch;
// normcheck_kernels and normcheck_claims load it on first use and hold the
// rows (torch_rows.cpp).
#include <algorithm>
#include <string>

#include <torch/torch.h>

#include "adapter_module.h"

namespace normcheck::torch_adapter {

// torch_layernorm_fwd.cpp
void torch_layernorm_fwd(const float* x, const float* gamma, const float* beta, float* y,
                         float* mean, float* rstd, int64_t rows, int64_t cols, float eps);
std::string torch_fwd_declines(const Shape& shape);
// torch_layernorm_bwd.cpp
void torch_layernorm_bwd(const float* dy, const float* x, const float* gamma,
                         const float* mean, const float* rstd, float* dx, float* dgamma,
                         float* dbeta, int64_t rows, int64_t cols);
std::string torch_bwd_declines(const Shape& shape);
// torch_layernorm_bwd_bf16.cpp
void torch_layernorm_bwd_bf16(const nc_call* call);

namespace {

// torch.manual_seed(seed); torch.randn(*sizes), copied out row-major.
void seeded_randn(uint64_t seed, const int64_t* sizes, int ndim, float* out) {
  torch::manual_seed(seed);
  const torch::Tensor t = torch::randn(at::IntArrayRef(sizes, static_cast<size_t>(ndim))).contiguous();
  const float* data = t.data_ptr<float>();
  std::copy(data, data + t.numel(), out);
}

}  // namespace
}  // namespace normcheck::torch_adapter

extern "C" [[gnu::visibility("default")]] const normcheck::adapters::AdapterModule*
normcheck_adapter_module() {
  namespace t = normcheck::torch_adapter;
  static const normcheck::adapters::AdapterModule module{
      .library = "libtorch " TORCH_VERSION,
      .layernorm_fwd = &t::torch_layernorm_fwd,
      .layernorm_bwd = &t::torch_layernorm_bwd,
      .layernorm_fwd_declines = &t::torch_fwd_declines,
      .layernorm_bwd_declines = &t::torch_bwd_declines,
      .layernorm_bwd_bf16 = &t::torch_layernorm_bwd_bf16,
      .seeded_randn = &t::seeded_randn,
  };
  return &module;
}
