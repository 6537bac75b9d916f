// Whether one row is inside a domain's row terms (kernel.h, InputRange:
// |mean|/sigma<=K, sigma>=S): the one predicate declines() and the
// generators that construct rows inside the domain share.
#pragma once

#include <string>

#include "normcheck/kernel.h"

namespace normcheck {

// Why the row is outside a row term of `domain` ("sigma = 1e-40 is outside
// the kernel's declared domain sigma>=2^-126"), or an empty string when it is
// inside. A non-finite row is inside (the `finite` term is about it), and
// |mean|/sigma does not bind an RMSNorm row (its mean_over_sigma is NaN).
std::string row_terms_reason(const InputRange& domain, const RowScale& row);

}  // namespace normcheck
