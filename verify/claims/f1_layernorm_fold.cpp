// F1 (seed 000): Linear(LN(x; gamma, beta)) = Linear'(LN(x; 1, 0)) with
// W' = W diag(gamma), b' = W beta + b.
//
// Real arithmetic: LN(x; gamma, beta) = xhat diag(gamma) + beta (row vector
// xhat), so W LN + b = W diag(gamma) xhat + (W beta + b): exact, any gamma,
// any eps. The check (fold_claim.cpp) computes both sides at 100 digits and in
// float32 with float32, bf16 and f16 weights against the derived bound.
#include "fold_claim.h"

namespace normcheck {

ClaimResult check_f1_layernorm_fold(const ClaimOptions& options) {
  return claims_fold::check_affine_fold(fold::NormKind::layer, options);
}

}  // namespace normcheck
