// A kernel row whose "computation" is outputs recorded in a file: judging a
// harness's outputs goes through evaluate(), the one verdict every kernel
// gets, held to what a version-2 plugin of the same spec is held to
// (fuzz/plugin_bounds.h) over the declared domain.
#pragma once

#include <string>

#include "fold/safetensors.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck::cli {

// The row's function copies each output tensor of the call (y, residual_out,
// mean, rstd / rrms; a quantized y's codes byte for byte, and a dynamic
// scale) from `outputs`, tensors named as in case_files.h, which
// read_outputs() has checked against the spec's dtypes and shapes. It reads
// no input. One recording at a time: a RecordedKernel sets the process's
// current recording while it lives.
class RecordedKernel {
 public:
  RecordedKernel(const OpSpec& spec, const InputRange& domain, const fold::TensorFile& outputs);
  ~RecordedKernel();
  RecordedKernel(const RecordedKernel&) = delete;
  RecordedKernel& operator=(const RecordedKernel&) = delete;

  const Kernel& row() const { return row_; }

 private:
  OpSpec spec_;
  Kernel row_;
};

// The kernel name a recorded harness has in verdicts and problem files.
inline constexpr const char* kHarnessKernelName = "harness";

// The row of a harness of `spec` (which must outlive it) over `domain`: the
// recorded outputs' function, plugin_bound(op, dtype), contiguous rows. gen
// draws its problems with this row's generator options (fuzz/case_gen.h).
Kernel harness_row(const OpSpec& spec, const InputRange& domain);

}  // namespace normcheck::cli
