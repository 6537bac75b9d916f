// JSON strings are UTF-8, and nlohmann::json's dump() throws on any other
// byte. Paths (a plugin's, --corpus, --input) and whatever a plugin hands us
// are bytes, so every --json writer that can carry one passes its document
// through json_safe() before dump(): one spelling, and a run never fails after
// the fact because of a name.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace normcheck::cli {

// `s` with valid UTF-8 kept as it is and every other byte written as the four
// characters \xNN (lowercase hex; e.g. the byte 0xff as "\xff"), so the text
// stays readable and says which byte it was. A string that already held the
// characters "\x.." reads the same: the escaped form is for reading, not for
// getting the bytes back (the text output keeps them).
inline std::string json_text(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto in = [&](std::size_t i, unsigned lo, unsigned hi) {
    return i < s.size() && byte(i) >= lo && byte(i) <= hi;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned c = byte(i);
    // The length of the well-formed sequence starting at i (the Unicode
    // Standard's table of well-formed UTF-8: no overlong form, no surrogate,
    // nothing above U+10FFFF), 0 if none.
    std::size_t n = 0;
    if (c < 0x80) n = 1;
    else if (c >= 0xc2 && c <= 0xdf) n = in(i + 1, 0x80, 0xbf) ? 2 : 0;
    else if (c >= 0xe0 && c <= 0xef) {
      const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
      n = in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) ? 3 : 0;
    } else if (c >= 0xf0 && c <= 0xf4) {
      const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
      n = in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf) ? 4 : 0;
    }
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
      ++i;
    }
  }
  return out;
}

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
