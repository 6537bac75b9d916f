// Saved counterexamples (tests/corpus/). Each file is a row file that
// `normcheck check --input FILE --op <layernorm|rmsnorm> --eps <eps>` reads
// (x, one row per line); what `check` does not take (eps, gamma, beta, dy,
// misalignment, the op) is kept in `# nc.<key> <values>` comment lines, which
// check ignores and the corpus replay reads:
//   # nc.op layernorm_fwd
//   # nc.eps 0x1.4f8b58p-17
//   # nc.misalign 3
//   # nc.gamma <d values>
//   # nc.beta <d values>
//   # nc.dy <d values>          (one line per row, in row order)
// A hand-written file may omit every nc. line: eps is then 1e-5 and each row
// its own problem.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

struct CorpusEntry {
  std::filesystem::path path;
  std::optional<Op> op;          // the op the counterexample was found for, if recorded
  std::vector<Problem> problems; // one, or one per row when rows differ in length
};

// The file's text for a counterexample (`note` lines become comments).
std::string corpus_text(Op op, const Problem& problem, const std::vector<std::string>& notes);

// Writes the counterexample into `dir` (created if missing) under a name made
// of the kernel, the property and a hash of the content; returns the path.
std::filesystem::path save_counterexample(const std::filesystem::path& dir, std::string_view kernel,
                                          std::string_view property, Op op, const Problem& problem,
                                          const std::vector<std::string>& notes);

// Reads a corpus file; throws normcheck::RowFileError or std::invalid_argument
// (with the path and line) on a malformed file.
CorpusEntry read_corpus_file(const std::filesystem::path& path);

// Every *.txt file under dir, sorted by name.
std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir);

}  // namespace normcheck::props
