// `--tolerance-ulp K`: a bound chosen by the user instead of the kernel's own.
//
// Every output element may be off by K u (u = 2^-24) times the natural scale
// of its terms (kernel.h states what each Bound coefficient multiplies):
//   y:      K u (|gamma_i| (1 + |xhat_i|) + |beta_i|)      (xhat_abs = affine_rel = K u)
//   mean:   K u mean|x|;   rstd, rrms: K u r
//   dx:     K u r (|g_i| + mean|g| + |xhat_i| mean|g xhat|)
//   dgamma: K u sum|dy xhat|;   dbeta: K u sum|dy|
// plus, like every bound, what gradual underflow costs (2^-150 per product,
// kUnderflowUnit, times K). K = 1 is about what a correctly rounded result
// of each term would need; a two-pass kernel's default bound grows with d and
// the row's condition, which this does not.
#pragma once

#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// The bound for K (a process-wide setting: the last K given wins).
BoundFn tolerance_bound(double k);

}  // namespace normcheck::fuzz
