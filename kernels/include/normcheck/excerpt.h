// Bytes from a file, a path or a plugin as a message quotes them: never raw
// (a control byte would reach the terminal), never whole (a 1 GB token would
// make a 1 GB message).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace normcheck {

// `s` with valid UTF-8 kept as it is and every other byte written as the four
// characters \xNN (lowercase hex, e.g. the byte 0xff as "\xff"); with
// `control` true, the C0 control bytes and DEL are written so too. The
// escaped form is for reading, not for getting the bytes back.
std::string escape_bytes(std::string_view s, bool control);

// At most the first `max_bytes` bytes of `s` (cut at a character boundary),
// control bytes and bytes that are not UTF-8 escaped, and when cut, "..."
// and the whole length: "abc... (1048576 bytes)".
inline constexpr std::size_t kExcerptBytes = 80;
std::string excerpt(std::string_view s, std::size_t max_bytes = kExcerptBytes);

}  // namespace normcheck
