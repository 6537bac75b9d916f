// A figure (an error/bound ratio, a ULP count) in the text of a baseline file:
// written with 17 significant digits, so that parsing it gives the same double
// back, and read as a non-negative number, `inf` included.
#pragma once

#include <string>

namespace normcheck {

// "%.17g", or "inf", "-inf", "nan".
std::string exact_figure_text(double v);

// The non-negative number `token` spells (`inf` too); std::invalid_argument
// naming `where` (a file and line) otherwise.
double parse_figure(const std::string& token, const std::string& where);

}  // namespace normcheck
