// A validator for the part of JSON Schema that reports/results.schema.json
// uses: type (a name or a list of names), enum, const, required, properties,
// items. Any other keyword in the schema is an error, so the schema cannot use
// a keyword this validator would silently ignore.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace normcheck::test_support {

// Every violation of `schema` by `doc`, each naming the JSON path
// ("/kernels/3/rows: expected integer, got string").
std::vector<std::string> validate(const nlohmann::json& doc, const nlohmann::json& schema,
                                  const std::string& path = "");

}  // namespace normcheck::test_support
