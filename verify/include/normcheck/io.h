// Output files are written whole or not at all.
#pragma once

#include <filesystem>
#include <string_view>

namespace normcheck {

// Writes `content` to a temporary file beside `path`, flushes it, then renames
// it over `path`: a reader sees the old file or the new one, never half of one.
// Throws std::runtime_error (with the path and the OS reason) on failure, and
// leaves no temporary file behind.
// Interruptions leave none either: on SIGINT, SIGTERM or SIGHUP (whose action
// was the default) the temporary files being written are removed before the
// process ends by the signal; and the first write into a directory removes
// the temporary files of this naming (".NAME.tmp.PID.N.A") whose process no
// longer exists, as SIGKILL leaves them. A process of another PID namespace
// writing into the same directory is not seen, and must not share it.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace normcheck
