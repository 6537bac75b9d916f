// The one way to call a kernel of the table: every caller (evaluate(), the
// properties, bench, the tests) fills a KernelArgs and calls invoke(), which
// picks the function type the row's op and dtype call for.
#pragma once

#include <cstdint>

#include "normcheck/kernel.h"

namespace normcheck {

// The arrays of one call, row-major rows x cols. x, dy and the main output
// are in the kernel's storage dtype (float for f32, the 16-bit bit patterns
// for bf16 and f16); everything else is float whatever the dtype. Pointers an
// op does not take are ignored; optional ones may be null where the ABI says
// so (plugin.h: gamma, beta, the forward statistics, dgamma, dbeta).
struct KernelArgs {
  int64_t rows = 0, cols = 0;
  float eps = 0;                        // forward only
  const void* x = nullptr;              // storage dtype
  const void* dy = nullptr;             // backward: storage dtype
  const float* gamma = nullptr;         // per column; null: 1
  const float* beta = nullptr;          // LayerNorm forward: per column; null: 0
  const float* saved_mean = nullptr;    // LayerNorm backward: the forward's mean per row
  const float* saved_stat = nullptr;    // backward: the forward's rstd (LayerNorm) or rrms (RMSNorm) per row
  void* out = nullptr;                  // y (forward) or dx (backward): storage dtype
  float* mean = nullptr;                // LayerNorm forward: mean per row
  float* stat = nullptr;                // forward: rstd (LayerNorm) or rrms (RMSNorm) per row
  float* dgamma = nullptr;              // backward: per column
  float* dbeta = nullptr;               // LayerNorm backward: per column
  // A norm followed by a Linear (is_norm_linear(op), float32 only): out is z,
  // rows x out_features.
  const float* weight = nullptr;        // W, out_features x cols, row-major
  const float* bias = nullptr;          // b per output; null: no bias
  int64_t out_features = 0;
};

// Calls kernel.fn with the arrays of `args` its op takes (a RemoteKernelFn
// hands them to the process that runs the kernel, kernel.h). Throws
// std::logic_error naming the kernel when its fn is null or not of the type
// its op and dtype call for (kernel.h: KernelFn).
void invoke(const Kernel& kernel, const KernelArgs& args);

}  // namespace normcheck
