// The row file format that `normcheck check --input` reads and the corpus of
// counterexamples (tests/corpus/) is written in:
//   - one row per line, each row its own problem (lines may differ in length);
//   - values separated by commas and/or blanks;
//   - decimal, hex-float (0x1.8p+3), nan, inf, -inf (case-insensitive);
//   - `#` starts a comment that runs to the end of the line; blank lines are skipped.
// A value outside the float range (1e39) is an error, not a silent infinity;
// so is a token of more than 256 bytes and a file of more than 1 GiB;
// decimals that fall below the subnormal range round to zero as strtof does.
//
// A row file may also hold one whole problem (a problem file): `# nc.<key>`
// comment lines, which a plain reader skips as comments, carry what the rows
// (x) do not:
//   # nc.op layernorm_fwd | layernorm_bwd | rmsnorm_fwd | rmsnorm_bwd
//           | layernorm_linear_fwd | rmsnorm_linear_fwd
//   # nc.dtype f32 | bf16 | f16       (the storage the kernel had; default f32)
//   # nc.kernel <name>                (informational: the kernel it was found on)
//   # nc.eps <value>                  (default 1e-5)
//   # nc.misalign <floats>            (default 0)
//   # nc.gamma <d values>             # nc.beta <d values>
//   # nc.dy <d values>                (one line per row, in row order)
//   # nc.mean <rows values>           # nc.rstd <rows values>    (LayerNorm backward)
//   # nc.rrms <rows values>           (RMSNorm backward)
//   # nc.weight <d values>            (a norm followed by a Linear: one line per output,
//                                      W is out_features x d; f32 only)
//   # nc.bias <out_features values>   (its bias, optional)
// The saved statistics of a backward problem are the forward's, correctly
// rounded to float from x; that is what evaluate() passes the kernel, and a
// file whose statistics differ is refused rather than replayed differently.
// Every value is written so that it reads back to the same bits
// (format_float_exact). A file without nc. lines is a plain row file: each row
// its own problem. A file with nc. lines must have nc.op; each nc. line holds
// exactly what its key takes (one word, one integer, values), nothing after.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

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

// The text of a row file (read_input_file, kMaxTextInput: 1 GiB); a path that
// is not a readable regular file or is larger throws RowFileError.
std::string read_row_file_text(const std::filesystem::path& path);

// Reads and parses a file; an unreadable path or a file with no rows throws
// RowFileError, and so does a file whose values do not fit in memory.
std::vector<ParsedRow> read_row_file(const std::filesystem::path& path);

// The RowFileError of a file whose values do not fit in memory (std::bad_alloc while reading it).
RowFileError out_of_memory(const std::filesystem::path& path);

// The longest token a value may be: a float's exact decimal expansion takes
// at most about 150 characters, its hex-float 16.
inline constexpr std::size_t kMaxTokenBytes = 256;

// Parses one float the way the row file does (used for --eps too); throws
// std::invalid_argument with the reason (a token longer than kMaxTokenBytes
// is refused unread).
float parse_float_token(std::string_view token);

// Formats a float so that parse_float_token gives back the same bits (hex-float
// for finite values, "nan", "inf", "-inf").
std::string format_float_exact(float value);

// ---- problem files ----

struct ProblemFile {
  bool whole = false;           // the file had nc. lines: problems holds the one problem
  std::optional<Op> op;         // nc.op, if given
  DType dtype = DType::f32;     // nc.dtype
  std::string kernel;           // nc.kernel, if given
  std::optional<OpSpec> spec;   // nc.spec, if given: the op spec of a kernel with a spec of its own (op_spec.h)
  std::vector<Problem> problems;  // one, or (a plain file with rows of differing length) one per row
};

// The text of a problem file for `problem` (each `note` becomes a comment
// line first); `spec`, when given, is written as nc.spec (a kernel with a spec
// of its own), with the residual (nc.residual, one line per row) and the row
// stride (nc.row_stride) it was run with.
std::string problem_file_text(Op op, DType dtype, const Problem& problem, const std::vector<std::string>& notes,
                              std::string_view kernel = {}, const OpSpec* spec = nullptr);

// Parses a problem file (or a plain row file). Throws RowFileError with the
// path and line on a malformed file, an unknown key or op, widths that do not
// match, or saved statistics other than the correctly rounded ones.
ProblemFile parse_problem_file(std::string_view text, std::string_view source);
ProblemFile read_problem_file(const std::filesystem::path& path);

std::optional<Op> op_from_string(std::string_view name);
std::optional<DType> dtype_from_string(std::string_view name);

}  // namespace normcheck
