// The seed of a subcommand's random draws: --seed when given, else the
// NORMCHECK_SEED environment variable, else the subcommand's default. A value
// that is not a non-negative integer is bad usage (UsageError, exit 2).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include "command.h"

namespace normcheck::cli {

inline uint64_t parse_seed(const std::string& text) {
  std::size_t used = 0;
  try {
    const unsigned long long value = std::stoull(text, &used, 0);
    if (used == text.size() && !text.empty() && text[0] != '-') return value;
  } catch (const std::exception&) {
  }
  throw UsageError("bad seed '" + text + "': expected a non-negative integer");
}

inline uint64_t seed_from_flag_or_env(const std::string& flag_text, uint64_t fallback) {
  if (!flag_text.empty()) return parse_seed(flag_text);
  const char* env = std::getenv("NORMCHECK_SEED");
  return env && *env ? parse_seed(env) : fallback;
}

}  // namespace normcheck::cli
