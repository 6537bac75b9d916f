// Deliberately broken kernels: the negative controls of the property suite
// (tests/properties/negative_controls_test.cpp). Each claims the default bound of
// its op (what every correct two-pass kernel meets) and breaks it in a way
// seen in real code. They are not in kernel_table(): nothing but the negative
// controls should ever run them.
#pragma once

#include <span>

#include "normcheck/kernel.h"

namespace normcheck::broken {

std::span<const Kernel> broken_kernels();

// One per file.
Kernel unbiased_variance_kernel();      // sigma^2 with d - 1 (torch.std's default, claim S3)
Kernel std_plus_eps_kernel();           // (x - mu) / (sigma + eps), seed 001's hand check (claim S2)
Kernel mean_skips_tail_kernel();        // a vector loop that forgets the d mod 8 tail in the mean
Kernel no_projection_backward_kernel(); // dx without the - xhat mean(g xhat) term
Kernel rmsnorm_eps_outside_kernel();    // 1 / (rms + eps) instead of 1 / sqrt(ms + eps)
Kernel overpromises_one_ulp_kernel();   // the float two-pass claiming layernorm_fwd.accurate's 1 ULP
Kernel nan_to_num_kernel();             // RMSNorm, then NaN -> 0: finite y on a row with a non-finite x

}  // namespace normcheck::broken
