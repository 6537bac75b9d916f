#include "property_table.h"

#include <vector>

namespace normcheck::props {

GenOptions options_for(const Kernel& kernel) { return kernel_options(kernel); }

GenOptions finite_options_for(const Kernel& kernel) {
  GenOptions opts = options_for(kernel);
  opts.nonfinite = false;
  return opts;
}

std::span<const PropertyDef> property_table() {
  // Cheapest and most general first: the negative controls stop at the first
  // property that catches a kernel.
  static const std::vector<PropertyDef> table = {
      kWithinBound,       kWithinUlpPromise,     kNonfinitePropagation,   kShiftInvariance,
      kScaleInvariance,
      kNegationSymmetry,  kPermutationEquivariance, kNormalizedMoments,   kGradientOrthogonality,
  };
  return table;
}

}  // namespace normcheck::props
