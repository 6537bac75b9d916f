// The fast phase of the spec reference (spec_reference.h): the rows whose
// every value the float references (reference.h: a proven double-double phase,
// then MPFR) decide, which is most rows of most specs. The interpreter in
// spec_reference.cpp decides the rest.
#pragma once

#include <vector>

#include "normcheck/op_spec.h"
#include "normcheck/spec_reference.h"

namespace normcheck::detail {

// Fills the rows of `out` (sized as spec_reference_fwd sizes it, but for
// y and xhat, empty) this phase decides and sets decided[row] = 1 for each.
// When it computes the float reference it sizes y and xhat too, with any
// values in the rows it leaves (the interpreter writes every element of
// those); when it returns before, they stay empty.
void spec_reference_fast(const OpSpec& spec, const SpecInputs& in, SpecResult which, SpecForwardReference& out,
                         std::vector<char>& decided);

}  // namespace normcheck::detail
