// printf-style formatting into a std::string, for the long figure and
// explanation lines of the J* checks.
#pragma once

#include <cstdio>
#include <string>

namespace normcheck::claims_text {

template <typename... Args>
std::string fmt(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  std::string out(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  std::snprintf(out.data(), out.size() + 1, format, args...);
  return out;
}

}  // namespace normcheck::claims_text
