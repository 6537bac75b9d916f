#include "seed.h"

#include <cstdlib>
#include <exception>

#include "command.h"

namespace normcheck::cli {

uint64_t parse_seed(const std::string& text) {
  std::size_t used = 0;
  try {
    const unsigned long long value = std::stoull(text, &used, 0);
    if (!text.empty() && used == text.size() && text[0] != '-') return value;
  } catch (const std::exception&) {
  }
  throw UsageError("bad seed '" + text + "': expected a non-negative integer");
}

uint64_t seed_from(const std::string& option, uint64_t fallback) {
  if (!option.empty()) return parse_seed(option);
  if (const char* env = std::getenv("NORMCHECK_SEED"); env && *env) return parse_seed(env);
  return fallback;
}

}  // namespace normcheck::cli
