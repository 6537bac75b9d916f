// One home for quoting a word of a printed command: every `normcheck check ...`
// line that fuzz, check or the report prints is meant to be pasted into a
// POSIX shell, and the words in it (a path, a plugin's kernel name) are data.
#pragma once

#include <string>
#include <string_view>

namespace normcheck::cli {

// `s` as one word of a POSIX shell: unchanged when every byte is one no shell
// gives a meaning to, else in single quotes (inside which only the quote
// itself needs care: ' becomes '\''), so `;`, `(`, `$(...)`, backquotes and
// blanks stay text. Any bytes, UTF-8 or not, pass through unchanged.
inline std::string shell_quote(std::string_view s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=+:,") ==
                        std::string_view::npos)
    return std::string(s);
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace normcheck::cli
