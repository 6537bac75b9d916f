// The one call of the kernel in an evaluation: x, dy and the main output (y or
// dx) in guarded arrays of the kernel's storage, through invoke().
#pragma once

#include "guarded_array.h"
#include "normcheck/evaluate.h"
#include "normcheck/invoke.h"
#include "stored_input.h"

namespace normcheck::evaluation {

// The kernel's main output (y or dx) and what its call did to the memory of x,
// dy and that output.
struct MainRun {
  Readback out;
  bool memory_ok = true;    // every guard zone of x, dy, out intact
  bool inputs_kept = true;  // x and dy unchanged
};

// Calls invoke(k, args) with args.x, args.dy (when `dy` is given: backward ops)
// and args.out set to guarded copies in the kernel's storage (float arrays for
// f32, 16-bit ones otherwise), the output full of the sentinel; the caller sets
// the other arrays. options.around_call brackets the call.
MainRun call_kernel(const Kernel& k, KernelArgs args, const StoredInput& x, const StoredInput* dy,
                    ArrayLayout layout, const EvaluateOptions& options);

}  // namespace normcheck::evaluation
