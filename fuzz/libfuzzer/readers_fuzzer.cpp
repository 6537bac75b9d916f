// A libFuzzer entry point for normcheck's readers (readers.h): the first byte
// chooses the reader, the rest is its input. A refusal is the expected answer
// to bad input; a crash, a hang, another exception or a message that is
// unbounded or carries a raw control byte aborts, which libFuzzer reports.
// Built by scripts/oss_fuzz_build.sh beside normcheck_fuzzer.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "baseline.h"
#include "fold/safetensors.h"
#include "fold/spec.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "readers.h"

namespace normcheck::fuzz {

std::string read_as(Reader reader, std::string_view bytes) {
  const std::string source(kSource);
  try {
    switch (reader) {
      case Reader::safetensors: fold::parse_safetensors(bytes, source); break;
      case Reader::problem_file: parse_problem_file(bytes, source); break;
      case Reader::row_file: parse_rows(bytes, source); break;
      case Reader::fold_spec: fold::parse_fold_spec(bytes, source); break;
      case Reader::baseline: report::parse_baseline(std::string(bytes), source); break;
      case Reader::op_spec: {
        const SpecParse parsed = parse_spec(bytes);
        return parsed.spec ? "" : source + ": " + parsed.error;
      }
      case Reader::domain: parse_domain(bytes); break;
    }
  } catch (const fold::SafetensorsError& e) {
    return e.what();
  } catch (const fold::FoldError& e) {
    return e.what();
  } catch (const RowFileError& e) {
    return e.what();
  } catch (const std::invalid_argument& e) {  // the baseline's and the domain's refusals
    if (reader != Reader::baseline && reader != Reader::domain) throw;
    return reader == Reader::domain ? source + ": " + e.what() : std::string(e.what());
  }
  return "";
}

}  // namespace normcheck::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using normcheck::fuzz::Reader;
  if (size == 0) return 0;
  const auto reader = static_cast<Reader>(data[0] % normcheck::fuzz::kReaders);
  const std::string why =
      normcheck::fuzz::read_as(reader, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  bool raw_control = false;
  for (const char c : why) raw_control = raw_control || (static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f;
  if (why.size() > 4096 || raw_control) {
    std::fprintf(stderr, "readers_fuzzer: reader %d: a refusal of %zu bytes%s\n", static_cast<int>(reader), why.size(),
                 raw_control ? " with a raw control byte" : "");
    std::abort();
  }
  return 0;
}
