#include "normcheck/excerpt.h"

namespace normcheck {
namespace {

// The length of the well-formed UTF-8 sequence at s[i] (the Unicode
// Standard's table: no overlong form, no surrogate, nothing above U+10FFFF),
// 0 if none.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto in = [&](std::size_t k, unsigned lo, unsigned hi) {
    return k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return in(i + 1, 0x80, 0xbf) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return in(i + 1, lo, hi) && in(i + 2, 0x80, 0xbf) && in(i + 3, 0x80, 0xbf) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string escape_bytes(std::string_view s, bool control) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = utf8_length(s, i);
    if (control && (c < 0x20 || c == 0x7f)) n = 0;
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

std::string excerpt(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return escape_bytes(s, true);
  std::size_t cut = max_bytes;
  // back off to the start of a UTF-8 character (at most 3 continuation bytes)
  for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80; ++k) --cut;
  return escape_bytes(s.substr(0, cut), true) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace normcheck
