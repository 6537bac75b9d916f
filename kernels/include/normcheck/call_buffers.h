// The arrays of one kernel call as named buffers (tensor descriptors): what a
// call is made of when it crosses a process boundary. normcheck lays a remote
// kernel's arrays out in memory it shares with the kernel host by these names
// and sizes, and the host binds them back into a KernelArgs (fuzz/host/), so
// that a new op or dtype changes this table, not the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "normcheck/invoke.h"
#include "normcheck/kernel.h"

namespace normcheck {

// The bytes of one element of an nc_tensor of ABI dtype `dtype` (plugin.h):
// float32 4, bf16 and f16 2, a quantized y's codes (NC_E4M3, NC_E5M2, NC_I8) 1.
inline std::size_t nc_dtype_bytes(int32_t dtype) {
  return dtype == NC_F32 ? 4 : dtype == NC_BF16 || dtype == NC_F16 ? 2 : 1;
}

struct CallBuffer {
  std::string_view name;  // the KernelArgs member: "x", "dy", "gamma", ..., "out", "dgamma"
  std::size_t bytes = 0;  // its size for this call's shape and the kernel's dtype
  bool output = false;    // the kernel writes it
  void* data = nullptr;   // where args points (an input's const removed: it is only read)
};

// Every array of `args` that `kernel`'s spec takes (op_spec.h) and that is
// not null, in a fixed order, with its size in its spec's format: x, dy,
// residual (rows x cols at the call's row stride: the last row ends at its
// last element), out (y or dx, likewise; z, rows x out_features, of a norm
// followed by a Linear), residual_out, gamma, beta, dgamma, dbeta (cols),
// saved_mean, saved_stat (rows), saved_y (a backward from=y: rows x cols at
// the row stride), mean, stat (rows), weight (out_features x cols), bias
// (out_features).
std::vector<CallBuffer> call_buffers(const Kernel& kernel, const KernelArgs& args);

// Points the member of `args` named `name` at `data`. False when no member
// has that name.
bool bind_call_buffer(KernelArgs& args, std::string_view name, void* data);

}  // namespace normcheck
