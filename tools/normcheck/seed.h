// The seed of a random subcommand: --seed when given, else NORMCHECK_SEED, else
// the subcommand's fixed default; a bad value is a usage error (exit 2).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include "command.h"

namespace normcheck::cli {

// `text` as a non-negative integer (decimal, or 0x hex); empty: `fallback`.
inline uint64_t parse_seed(const std::string& text, uint64_t fallback) {
  if (text.empty()) return fallback;
  std::size_t used = 0;
  try {
    const unsigned long long value = std::stoull(text, &used, 0);
    if (used == text.size() && text[0] != '-') return value;
  } catch (const std::exception&) {
  }
  throw UsageError("bad seed '" + text + "': expected a non-negative integer");
}

// The text to parse: the flag's when given, else NORMCHECK_SEED's (or "").
inline std::string seed_text(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("NORMCHECK_SEED");
  return env ? env : "";
}

}  // namespace normcheck::cli
