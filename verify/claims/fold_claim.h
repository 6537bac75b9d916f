// F1 and F2 share one check: the fold of a norm's affine into a consumer
// Linear, exact at 100 digits and in float32 against the derived bound.
#pragma once

#include "fold/families.h"
#include "normcheck/claims.h"

namespace normcheck::claims_fold {

ClaimResult check_affine_fold(fold::NormKind norm, const ClaimOptions& options);

}  // namespace normcheck::claims_fold
