// The one way to call a kernel of the table: every caller (evaluate(), the
// properties, bench, the tests) fills a KernelArgs and calls invoke(), which
// picks the function type the row's op and dtype call for.
#pragma once

#include <cstdint>

#include "normcheck/kernel.h"

namespace normcheck {

// The arrays of one call, row-major rows x cols. Each array holds its
// tensor's format in the kernel's spec (spec_of(kernel), op_spec.h): float
// for f32, the 16-bit bit patterns for bf16 and f16. For the table's ops x,
// dy and the main output are in the kernel's storage dtype and everything
// else is float. Pointers an op does not take are ignored; optional ones may
// be null where the ABI says so (plugin.h: gamma, beta, the forward
// statistics, dgamma, dbeta).
struct KernelArgs {
  int64_t rows = 0, cols = 0;
  float eps = 0;                        // the problem's (a backward of the table's ABI ignores it)
  const void* x = nullptr;
  const void* dy = nullptr;             // backward
  const void* residual = nullptr;       // a spec with `add`: added to x in front of the norm
  const void* gamma = nullptr;          // per column; null: 1
  const void* beta = nullptr;           // per column; null: 0
  const void* saved_mean = nullptr;     // LayerNorm backward: the forward's mean per row
  const void* saved_stat = nullptr;     // backward: the forward's rstd (LayerNorm) or rrms (RMSNorm) per row
  const void* saved_y = nullptr;        // a backward from=y: the forward's y, rows x cols (in place of x)
  void* out = nullptr;                  // y (forward) or dx (backward)
  void* residual_out = nullptr;         // a spec with `add`: x + residual
  void* mean = nullptr;                 // LayerNorm forward: mean per row
  void* stat = nullptr;                 // forward: rstd (LayerNorm) or rrms (RMSNorm) per row
  // A quantized forward (op_spec.h, Quantization): out holds y's codes (one
  // byte each); scale is the static scale (an input, one float) or the
  // per-token / per-block scales the kernel writes (rows x scales_per_row);
  // scale_inv (scale_apply=multiply) and amax (amax) are outputs, one float each.
  void* scale = nullptr;
  void* scale_inv = nullptr;
  void* amax = nullptr;
  void* dgamma = nullptr;               // backward: per column (float32 for the table's ABI; a spec's dgamma format)
  void* dbeta = nullptr;                // LayerNorm backward: per column (likewise)
  // Elements from one row's start to the next in x, dy, residual, saved_y,
  // out and residual_out; 0: cols (contiguous). Only a version-2 kernel takes rows
  // that are not contiguous (invoke() refuses others).
  int64_t row_stride = 0;
  // A norm followed by a Linear (is_norm_linear(op), float32 only): out is z,
  // rows x out_features.
  const float* weight = nullptr;        // W, out_features x cols, row-major
  const float* bias = nullptr;          // b per output; null: no bias
  int64_t out_features = 0;

  int64_t stride() const { return row_stride ? row_stride : cols; }
};

// Calls kernel.fn with the arrays of `args` its op takes (a RemoteKernelFn
// hands them to the process that runs the kernel, kernel.h; a version-2
// function gets them as the tensors of an nc_call, plugin.h). Throws
// std::logic_error naming the kernel when its fn is null or not of the type
// its op and dtype call for (kernel.h: KernelFn), or when rows that are not
// contiguous go to a kernel that is not version 2.
void invoke(const Kernel& kernel, const KernelArgs& args);

}  // namespace normcheck
