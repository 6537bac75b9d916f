// Every reader of a file or text normcheck takes from a user or a harness,
// by kind, on bytes: the libFuzzer entry point readers_fuzzer.cpp and the
// hostile-file suite (tests/fuzz/test_readers.cpp) call them through here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace normcheck::fuzz {

enum class Reader : uint8_t {
  safetensors,   // parse_safetensors: judge's case files, fold's weights
  problem_file,  // parse_problem_file: check --input, the corpus
  row_file,      // parse_rows: a plain row file
  fold_spec,     // parse_fold_spec: fold --spec
  baseline,      // report::parse_baseline: report --check-baseline
  op_spec,       // parse_spec: gen --spec, nc.spec, a case's metadata
  domain,        // parse_domain: gen --domain, a case's metadata
};
inline constexpr int kReaders = 7;

// The name every refusal of `reader` starts with (its source, as a file's path would be).
inline constexpr std::string_view kSource = "hostile.input";

// Reads `bytes` as `reader` does. Returns "" when the input is accepted, and
// the message when it is refused as bad input (the reader's own error type);
// anything else (another exception, a crash) is a bug the caller reports.
std::string read_as(Reader reader, std::string_view bytes);

}  // namespace normcheck::fuzz
