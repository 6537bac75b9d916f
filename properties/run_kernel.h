// Runs an f32 kernel of the table on a problem and returns its outputs, for
// the invariant properties (which compare a kernel with itself on related
// inputs). Verdicts against the reference go through evaluate() instead.
#pragma once

#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

struct KernelOutputs {
  std::vector<float> main;            // y (forward) or dx (backward)
  std::vector<float> stat;            // forward: rstd or rrms per row
  std::vector<float> mean;            // LayerNorm forward: mean per row
  std::vector<float> dgamma, dbeta;   // backward: per column (dbeta LayerNorm only)
};

// True when run_kernel can call this row (f32 storage, a norm: not a norm
// followed by a Linear).
bool runnable(const Kernel& kernel);

// The backward receives the forward statistics of x correctly rounded to
// float (from the exact reference), as evaluate() gives them.
KernelOutputs run_kernel(const Kernel& kernel, const Problem& problem);

}  // namespace normcheck::props
