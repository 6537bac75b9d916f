// The one way normcheck reads an input file: bounded and total.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace normcheck {

// A file that cannot be an input; what() names it (excerpt()ed) and says why.
struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The limits on each kind of input, in bytes (the docs state the same numbers).
inline constexpr uint64_t kMaxTextInput = uint64_t{1} << 30;         // row and problem files: 1 GiB
inline constexpr uint64_t kMaxSmallInput = uint64_t{16} << 20;       // fold specs, baselines: 16 MiB
inline constexpr uint64_t kMaxTensorInput = uint64_t{256} << 30;     // safetensors files: 256 GiB

// The bytes of the regular file at `path` (a symlink to one is followed).
// Anything else (a FIFO, a device such as /dev/zero, a directory, a socket)
// is refused without blocking or reading, and so is a file of more than
// `max_bytes` bytes, before any is read. Throws InputFileError.
std::string read_input_file(const std::filesystem::path& path, uint64_t max_bytes);

// The path as a message names it: excerpt() of its bytes (normcheck/excerpt.h).
std::string path_text(const std::filesystem::path& path);

}  // namespace normcheck
