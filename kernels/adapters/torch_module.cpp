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

adapters::LayerNormFwdEntry torch_layernorm_fwd;  // torch_layernorm_fwd.cpp
adapters::DeclinesEntry torch_fwd_declines;
adapters::LayerNormBwdEntry torch_layernorm_bwd;  // torch_layernorm_bwd.cpp
adapters::DeclinesEntry torch_bwd_declines;
void torch_layernorm_bwd_bf16(const nc_call* call);  // torch_layernorm_bwd_bf16.cpp

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
