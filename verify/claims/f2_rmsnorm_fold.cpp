// F2: the same fold for RMSNorm, which has no beta: W' = W diag(gamma), b' = b.
// RMSNorm(x; gamma) = (x / sqrt(mean(x^2) + eps)) diag(gamma), so the identity
// is F1's with beta = 0; checked the same way (fold_claim.cpp).
#include "fold_claim.h"

namespace normcheck {

ClaimResult check_f2_rmsnorm_fold(const ClaimOptions& options) {
  return claims_fold::check_affine_fold(fold::NormKind::rms, options);
}

}  // namespace normcheck
