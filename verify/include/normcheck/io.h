// Output files are written whole or not at all.
#pragma once

#include <filesystem>
#include <string_view>

namespace normcheck {

// Writes `content` to a temporary file beside `path`, flushes it, then renames
// it over `path`: a reader sees the old file or the new one, never half of one.
// Throws std::runtime_error (with the path and the OS reason) on failure, and
// leaves no temporary file behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace normcheck
