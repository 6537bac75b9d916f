// JSON strings are UTF-8, and nlohmann::json's dump() throws on any other
// byte. Paths (a plugin's, --corpus, --input) and whatever a plugin hands us
// are bytes, so every --json writer that can carry one passes its document
// through json_safe() before dump(): one spelling, and a run never fails after
// the fact because of a name.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "normcheck/excerpt.h"

namespace normcheck::cli {

// `s` with valid UTF-8 kept as it is and every other byte written as the four
// characters \xNN (lowercase hex; e.g. the byte 0xff as "\xff"), so the text
// stays readable and says which byte it was. A string that already held the
// characters "\x.." reads the same: the escaped form is for reading, not for
// getting the bytes back (the text output keeps them).
inline std::string json_text(std::string_view s) { return escape_bytes(s, false); }

// `doc` with json_text() applied to every string and every object key.
inline nlohmann::json json_safe(const nlohmann::json& doc) {
  if (doc.is_string()) return json_text(doc.get_ref<const std::string&>());
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : doc) out.push_back(json_safe(v));
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : doc.items()) out[json_text(key)] = json_safe(value);
    return out;
  }
  return doc;
}

}  // namespace normcheck::cli
