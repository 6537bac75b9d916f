#include "normcheck/row_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "normcheck/excerpt.h"
#include "normcheck/input_file.h"

namespace normcheck {

namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\r'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

float parse_float_token(std::string_view token) {
  if (token.empty()) throw std::invalid_argument("empty value");
  if (token.size() > kMaxTokenBytes)
    throw std::invalid_argument("a token of " + std::to_string(token.size()) + " bytes, more than the " +
                                std::to_string(kMaxTokenBytes) + " a number takes: '" + excerpt(token) + "'");
  const std::string text = lower(token);
  // The format names exactly these spellings of the specials; strtof would also
  // take "nan(...)", "infinity" and leading blanks, so anything else must be
  // made of the characters of a decimal or hex-float number.
  if (text == "nan" || text == "+nan" || text == "-nan") return std::nanf("");
  if (text == "inf" || text == "+inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  if (text.find_first_not_of("0123456789abcdefxp.+-") != std::string::npos)
    throw std::invalid_argument("not a number: '" + excerpt(token) + "'");
  errno = 0;
  char* end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0')
    throw std::invalid_argument("not a number: '" + excerpt(token) + "'");
  if (errno == ERANGE && std::isinf(value))
    throw std::invalid_argument("'" + excerpt(token) + "' is outside the float range");
  return value;
}

std::string format_float_exact(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%a", static_cast<double>(value));
  return buffer;
}

std::vector<ParsedRow> parse_rows(std::string_view text, std::string_view source_view) {
  const std::string source = excerpt(source_view, 4 * kExcerptBytes);
  std::vector<ParsedRow> rows;
  int64_t line_number = 0;
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    ++line_number;
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);

    ParsedRow row{line_number, {}};
    size_t i = 0;
    while (i < line.size()) {
      if (is_separator(line[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && !is_separator(line[j])) ++j;
      try {
        row.values.push_back(parse_float_token(line.substr(i, j - i)));
      } catch (const std::invalid_argument& e) {
        throw RowFileError(source + ":" + std::to_string(line_number) + ":" +
                               std::to_string(i + 1) + ": " + e.what(),
                           line_number, static_cast<int64_t>(i + 1));
      }
      i = j;
    }
    if (!row.values.empty()) rows.push_back(std::move(row));
    if (line_end == text.size()) break;
    line_start = line_end + 1;
  }
  return rows;
}

std::string read_row_file_text(const std::filesystem::path& path) {
  try {
    return read_input_file(path, kMaxTextInput);
  } catch (const InputFileError& e) {
    throw RowFileError(e.what(), 0, 0);
  }
}

RowFileError out_of_memory(const std::filesystem::path& path) {
  return RowFileError(path_text(path) + ": its values do not fit in the memory normcheck may use", 0, 0);
}

std::vector<ParsedRow> read_row_file(const std::filesystem::path& path) {
  std::vector<ParsedRow> rows;
  try {
    rows = parse_rows(read_row_file_text(path), path.string());
  } catch (const std::bad_alloc&) {
    throw out_of_memory(path);
  }
  if (rows.empty()) throw RowFileError(path_text(path) + ": no rows (the file is empty or all comments)", 0, 0);
  return rows;
}

}  // namespace normcheck
