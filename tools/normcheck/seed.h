// The seed of a random run, the same way for every subcommand: the option's
// text when given, else NORMCHECK_SEED, else the subcommand's fixed default.
// The parsing is normcheck::parse_seed (normcheck/seed.h); here a bad seed
// becomes a UsageError (exit 2).
#pragma once

#include <cstdint>
#include <string>

namespace normcheck::cli {

// A non-negative integer (decimal or 0x hex); UsageError otherwise.
uint64_t parse_seed(const std::string& text);

// `option` when non-empty, else NORMCHECK_SEED when set, else `fallback`;
// UsageError when the one used is not a seed.
uint64_t seed_from(const std::string& option, uint64_t fallback);

}  // namespace normcheck::cli
