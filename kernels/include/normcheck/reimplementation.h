// Which kernel of ours reimplements a third party's algorithm. A third
// party's adapter is held to the default bound (bounds.h: what a careful
// float32 two-pass kernel meets); the bound of the kernel that reimplements
// its algorithm says what that algorithm promises, so a report can tell a
// kernel that misses the standard because of its algorithm from one that
// misses its own algorithm's promise too.
#pragma once

#include "normcheck/kernel.h"

namespace normcheck {

// The row of kernel_table() that reimplements `kernel`'s algorithm, or
// nullptr when none does. libtorch's LayerNorm forward and backward:
// layernorm_fwd.pytorch_form and layernorm_bwd.pytorch_form (the same
// Welford/Chan moments and scale/bias form, resp. the same ds/db form; the
// forward's moments in a scalar cascade, not libtorch's vector lanes, so its
// bound follows our tree's depth, not libtorch's). oneDNN's kernels are
// two-pass, the default bound's own kind: nullptr.
const Kernel* reimplementation_of(const Kernel& kernel);

}  // namespace normcheck
