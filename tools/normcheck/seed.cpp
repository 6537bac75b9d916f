#include "seed.h"

#include <stdexcept>

#include "command.h"
#include "normcheck/seed.h"

namespace normcheck::cli {

uint64_t parse_seed(const std::string& text) {
  try {
    return normcheck::parse_seed(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

uint64_t seed_from(const std::string& option, uint64_t fallback) {
  if (!option.empty()) return parse_seed(option);
  try {
    return seed_from_env().value_or(fallback);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace normcheck::cli
