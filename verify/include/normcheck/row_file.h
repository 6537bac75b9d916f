// The row file format that `normcheck check --input` reads and the corpus of
// counterexamples (tests/corpus/) is written in:
//   - one row per line, each row its own problem (lines may differ in length);
//   - values separated by commas and/or blanks;
//   - decimal, hex-float (0x1.8p+3), nan, inf, -inf (case-insensitive);
//   - `#` starts a comment that runs to the end of the line; blank lines are skipped.
// A value outside the float range (1e39) is an error, not a silent infinity;
// decimals that fall below the subnormal range round to zero as strtof does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace normcheck {

struct RowFileError : std::runtime_error {
  RowFileError(const std::string& what, int64_t at_line, int64_t at_column)
      : std::runtime_error(what), line(at_line), column(at_column) {}
  int64_t line, column;  // 1-based; 0 when the error is about the whole file
};

struct ParsedRow {
  int64_t line = 0;          // 1-based line number in the file
  std::vector<float> values;
};

// Parses the text of a row file. `source` names it in error messages.
// Throws RowFileError with "<source>:<line>:<column>: <reason>".
std::vector<ParsedRow> parse_rows(std::string_view text, std::string_view source);

// Reads and parses a file; an unreadable path or a file with no rows throws
// RowFileError.
std::vector<ParsedRow> read_row_file(const std::filesystem::path& path);

// Parses one float the way the row file does (used for --eps too); throws
// std::invalid_argument with the reason.
float parse_float_token(std::string_view token);

// Formats a float so that parse_float_token gives back the same bits (hex-float
// for finite values, "nan", "inf", "-inf").
std::string format_float_exact(float value);

}  // namespace normcheck
