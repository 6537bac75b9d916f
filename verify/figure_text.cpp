#include "normcheck/figure_text.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "normcheck/excerpt.h"

namespace normcheck {

std::string exact_figure_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char s[40];
  std::snprintf(s, sizeof s, "%.17g", v);
  return s;
}

double parse_figure(const std::string& token, const std::string& where) {
  if (token == "inf") return INFINITY;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(token, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != token.size() || !(v >= 0))
    throw std::invalid_argument(where + ": '" + excerpt(token) + "' is not a non-negative number");
  return v;
}

void for_each_baseline_line(
    const std::string& text, const std::string& file_name,
    const std::function<void(const std::string& where, std::istringstream& words)>& comment,
    const std::function<void(const std::string& where, const std::string& first, std::istringstream& words)>& record) {
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string where = file_name + ":" + std::to_string(number);
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first == "#") {
      comment(where, words);
      continue;
    }
    if (first[0] != '#') record(where, first, words);
  }
}

}  // namespace normcheck
