// JSON has no infinity or NaN: such figures are written as null (and the text
// output spells them), so every document stays parseable.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace normcheck::cli {

inline nlohmann::json json_number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace normcheck::cli
