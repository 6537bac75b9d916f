#include "normcheck/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "normcheck/excerpt.h"

namespace normcheck {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string path_text(const std::filesystem::path& path) { return excerpt(path.native(), 4 * kExcerptBytes); }

std::string read_input_file(const std::filesystem::path& path, uint64_t max_bytes) {
  const std::string name = path_text(path);
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting
  // for a writer; fstat() then refuses it.
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (f.fd < 0) throw InputFileError(name + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputFileError(name + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw InputFileError(name + ": " + kind_of(st.st_mode) + ", not a regular file: normcheck reads inputs from regular files only");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    throw InputFileError(name + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                         " bytes normcheck reads from a file of this kind");
  std::string out;
  try {
    out.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    throw InputFileError(name + ": " + std::to_string(size) + " bytes do not fit in the memory normcheck may use");
  }
  std::size_t have = 0;
  // The size fstat() gave is what is read: a file that grows meanwhile is
  // refused rather than read past its limit.
  for (;;) {
    char probe;
    const bool full = have == out.size();
    const ssize_t n = full ? ::read(f.fd, &probe, 1) : ::read(f.fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputFileError(name + ": read error: " + std::strerror(errno));
    }
    if (n == 0) break;
    if (full) throw InputFileError(name + ": the file grew while it was read");
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return out;
}

}  // namespace normcheck
