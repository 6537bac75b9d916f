// Rows with a non-finite input (x, or dy for a backward): what the two
// conventions evaluate() accepts give there, element by element, and which of
// them a computed value follows (docs/semantics.md, "Rows with a non-finite
// input"; evaluate.h: NonFinite, NonFiniteConvention).
//
// The row-NaN convention is the reference's: y, dx, z and rstd/rrms of the row
// NaN. The IEEE evaluation of the op's formula is non-finite at every such
// element in every standard form of every op (the derivations are in
// docs/semantics.md), except RMSNorm forward on a row whose non-finite values
// are all infinities: mean(x^2) = +inf there, rrms = 1/sqrt(+inf + eps) = +0
// exactly, and y_j = gamma_j x_j rrms = +-0 exactly for a finite x_j and a
// finite gamma_j, whatever the rounding (a product of finite values and +0).
#pragma once

#include <optional>
#include <span>

#include "normcheck/evaluate.h"

namespace normcheck::evaluation {

// Every non-finite value of the row is an infinity (there is one, and no NaN).
bool only_infinities(std::span<const float> row);

// The IEEE evaluation of RMSNorm forward on a row with a non-finite x, given
// only_infinities(row): rrms, and y_j (gamma_j = 1 without gamma). +0, or
// nullopt where it is non-finite.
std::optional<double> ieee_rrms(bool infinities_only);
std::optional<double> ieee_rmsnorm_y(bool infinities_only, float x_j, double gamma_j);

// Which convention a computed element of y, dx, z or rstd/rrms of such a row
// follows, the IEEE evaluation being `ieee` (nullopt: non-finite): NaN is the
// row-NaN convention's value; an infinity follows the IEEE evaluation where it
// is non-finite and neither convention (mixed) where it is finite; a finite
// value follows the IEEE evaluation when it equals it, and neither otherwise.
NonFiniteConvention convention_of(float computed, std::optional<double> ieee);

// Whether the rule admits an element of that convention: row_nan_or_ieee
// everything but neither, row_nan_only the row-NaN convention's NaN.
bool admitted(NonFinite rule, NonFiniteConvention element);

}  // namespace normcheck::evaluation
