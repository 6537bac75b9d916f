// The text of a baseline file (the report's and the accuracy baselines'):
// its lines of words, and its figures (an error/bound ratio, a ULP count),
// written with 17 significant digits, so that parsing one gives the same
// double back, and read as a non-negative number, `inf` included.
#pragma once

#include <functional>
#include <sstream>
#include <string>

namespace normcheck {

// "%.17g", or "inf", "-inf", "nan".
std::string exact_figure_text(double v);

// The non-negative number `token` spells (`inf` too); std::invalid_argument
// naming `where` (a file and line) otherwise.
double parse_figure(const std::string& token, const std::string& where);

// Each line of `text` split into words, with its place "<file_name>:<line>"
// for messages: `comment(where, words)` for a line whose first word is "#"
// (`words` then holds the rest), `record(where, first, words)` for a line
// whose first word does not start with '#'. Blank lines and comments written
// "#text" are skipped. What either throws propagates.
void for_each_baseline_line(
    const std::string& text, const std::string& file_name,
    const std::function<void(const std::string& where, std::istringstream& words)>& comment,
    const std::function<void(const std::string& where, const std::string& first, std::istringstream& words)>& record);

}  // namespace normcheck
