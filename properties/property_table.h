// The properties every kernel of the table is held to. suite_test.cpp runs
// each applicable (kernel, property) pair as its own test; the negative
// controls run the same list against broken kernels. docs/properties.md
// lists each property, why it must hold and its tolerance.
#pragma once

#include <span>
#include <string_view>

#include "generators.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

struct PropertyDef {
  std::string_view name;
  bool (*applies)(const Kernel& kernel);
  GenOptions (*options)(const Kernel& kernel);      // the generator it draws from
  void (*body)(const Kernel& kernel, const Problem& problem);  // RC_ASSERT / RC_FAIL / RC_PRE
};

std::span<const PropertyDef> property_table();

// GenOptions for the kernel (kernel_options, generators.h): its op and range,
// non-finite inputs when it handles them, a residual and row strides when it
// takes them.
GenOptions options_for(const Kernel& kernel);

// options_for without non-finite inputs: the properties that compare values
// (invariants, moments, orthogonality), which a NaN row would leave nothing to compare.
GenOptions finite_options_for(const Kernel& kernel);

// The properties, one file each (properties/*_property.cpp).
extern const PropertyDef kWithinBound;
extern const PropertyDef kWithinUlpPromise;
extern const PropertyDef kNonfinitePropagation;
extern const PropertyDef kShiftInvariance;
extern const PropertyDef kScaleInvariance;
extern const PropertyDef kNegationSymmetry;
extern const PropertyDef kPermutationEquivariance;
extern const PropertyDef kNormalizedMoments;
extern const PropertyDef kGradientOrthogonality;

}  // namespace normcheck::props
