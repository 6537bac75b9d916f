// The seed of a random run: one parser for `--seed` and NORMCHECK_SEED, used
// by the command line, the property runner and the tests, so that a seed
// printed by one is accepted by all.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace normcheck {

// A seed's text: a non-negative integer that fits in 64 bits, in decimal
// (leading zeros stay decimal) or hex after 0x/0X, and nothing else (no sign,
// no spaces, no trailing characters). std::invalid_argument otherwise, whose
// message names the text: "bad seed '<text>': expected a non-negative integer
// (decimal or 0x hex) below 2^64".
uint64_t parse_seed(std::string_view text);

// NORMCHECK_SEED parsed when set and not empty; nullopt otherwise.
// std::invalid_argument ("bad NORMCHECK_SEED '<text>': ...") when it is not a seed.
std::optional<uint64_t> seed_from_env();

}  // namespace normcheck
