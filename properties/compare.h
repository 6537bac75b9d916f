// Assertions shared by the property bodies (they RC_FAIL with a message that
// names the element, its values in hex and the tolerance).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "normcheck/evaluate.h"

namespace normcheck::props {

// Fails the case unless the evaluation passed; the message names the worst element.
void require_pass(const Evaluation& evaluation);

// Fails the case unless |got_i - expected_i| <= tolerance_i for every i; a NaN
// must meet a NaN, and an infinity the same infinity or a value from which
// the tolerance reaches beyond FLT_MAX on the infinity's side (evaluate()
// admits an overflow where exact +- allowance leaves the float range). A tolerance of +inf checks nothing (the bound promises
// nothing there, evaluate.h); a NaN tolerance (a non-finite input) checks
// only the NaN/inf placement.
void require_within(std::string_view what, const std::vector<float>& got,
                    const std::vector<float>& expected, const std::vector<double>& tolerance);

}  // namespace normcheck::props
