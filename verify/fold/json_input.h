// JSON from a file (a safetensors header, a fold spec), parsed bounded and
// quoted bounded.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace normcheck::fold {

// Why a document was refused; the caller prefixes the file's name.
struct JsonInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The limits every JSON input is held to (docs/folding.md states them): no
// format normcheck reads nests deeper than 5 levels (a fold spec's consumer),
// and a safetensors header of a real model has tens of thousands of values.
inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxJsonValues = 10'000'000;

// `text` parsed, after one linear pass has checked that it is valid JSON,
// nests at most kMaxJsonDepth arrays and objects, holds at most
// kMaxJsonValues values, and names no key twice in any object (the last
// would win silently). Throws JsonInputError.
nlohmann::json parse_json_input(std::string_view text);

// What a message says of a value from a file: its type and, for a scalar, a
// capped and escaped excerpt ("an array of 3 elements", "the string \"abc\"",
// "the number 1.5"); never the whole value, which may be megabytes or nest
// deeper than dump() recurses safely.
std::string describe_json(const nlohmann::json& value);

}  // namespace normcheck::fold
