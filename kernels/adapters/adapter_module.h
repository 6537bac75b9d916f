// The interface between normcheck_kernels and an adapter module
// (libnormcheck_onednn.so, libnormcheck_torch.so). A module is the only thing
// that links its third-party library; normcheck_kernels keeps the rows (name,
// bound, range, what needs no library) and dlopen()s the module the first time
// a row is about to run or say whether it declines (adapter_loader.h). So a
// process that never touches an adapter does not load oneDNN or libtorch, and
// normcheck runs where they are absent: the rows then decline with the reason.
//
// Module and loader are built together from this header: the ABI number only
// catches a module left over from another build in the same directory.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "normcheck/kernel.h"

namespace normcheck::adapters {

inline constexpr int kAdapterModuleAbi = 2;

// The functions a module's entries point at, declared with these types in the
// module's entry file and defined in its per-op files.
using LayerNormFwdEntry = std::remove_pointer_t<nc_layernorm_fwd_fn>;
using LayerNormBwdEntry = std::remove_pointer_t<nc_layernorm_bwd_fn>;
using DeclinesEntry = std::string(const Shape& shape);

struct AdapterModule {
  int abi = kAdapterModuleAbi;
  const char* library = "";  // what the module runs, e.g. "libtorch 1.13.1"
  nc_layernorm_fwd_fn layernorm_fwd = nullptr;
  nc_layernorm_bwd_fn layernorm_bwd = nullptr;
  DeclineFn layernorm_fwd_declines = nullptr;  // the library's own limits (nullptr: none)
  DeclineFn layernorm_bwd_declines = nullptr;
  // libtorch only: the backward on bf16 tensors, as autograd calls it for a
  // bf16 nn.LayerNorm (a version-2 call; its row's spec gives the formats).
  // It declines as layernorm_bwd does.
  SpecKernelFn layernorm_bwd_bf16 = nullptr;
  // libtorch only: manual_seed(seed), then randn(sizes) into out (row-major,
  // product of sizes floats), as torch.manual_seed(seed); torch.randn(*sizes).
  void (*seeded_randn)(uint64_t seed, const int64_t* sizes, int ndim, float* out) = nullptr;
};

}  // namespace normcheck::adapters

// The one symbol a module exports (extern "C", so dlsym finds it by this name).
#define NORMCHECK_ADAPTER_MODULE_SYMBOL "normcheck_adapter_module"
using normcheck_adapter_module_fn = const normcheck::adapters::AdapterModule* (*)();
