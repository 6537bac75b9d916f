// A kernel row whose "computation" is outputs recorded in a file: judging a
// harness's outputs goes through evaluate(), the one verdict every kernel
// gets, held to what a version-2 plugin of the same spec is held to
// (fuzz/plugin_bounds.h) over the declared domain.
#pragma once

#include <string>

#include "fold/safetensors.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/plugin.h"

namespace normcheck::cli {

// The row's function copies each output tensor of the call (y, residual_out,
// mean, rstd / rrms; a quantized y's codes byte for byte, and a dynamic
// scale; a backward's dx, dgamma, dbeta, dresidual) from `outputs`, tensors named as in case_files.h, which
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

// The tensor of a version-2 call that holds tensor t of the op (stat: rstd;
// a backward's residual and residual_out: dresidual in and out).
const nc_tensor& call_tensor(const nc_call& call, TensorName t);

// What evaluate() gives a kernel of backward spec `spec` on problem `p`:
// every input tensor of the call (case_files.h, input_tensors: dy, x or y
// and beta, dresidual, gamma, the saved mean and rstd / rrms), named as in
// the files, in their formats, contiguous. The saved statistics are the
// forward's exact ones correctly rounded, then rounded to their formats; a
// from=y backward's y is the forward's in y's format (norm_bwd.cpp). Taken
// from the call itself (a row whose function records its inputs), so that gen,
// the judge and the Python module hand a harness exactly what a plugin gets.
// `declined`: why evaluate() gives no call (a 1 + gamma that is not a float32
// value), the tensors then empty.
struct BackwardCallInputs {
  std::vector<fold::Tensor> tensors;
  std::string declined;
};
BackwardCallInputs backward_call_inputs(const OpSpec& spec, const Problem& p);

}  // namespace normcheck::cli
