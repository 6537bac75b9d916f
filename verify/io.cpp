// write_file_atomically: temporary file beside the target, write, fsync, rename.
#include "normcheck/io.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace normcheck {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* step, int err) {
  throw std::runtime_error("cannot write " + path.string() + ": " + step + ": " +
                           std::strerror(err));
}

// A name no other writer (thread or process) uses at the same time. The file
// is created with O_EXCL and mode 0666, so the umask applies as it would to
// any new file (mkstemp would force 0600).
std::filesystem::path temp_beside(const std::filesystem::path& path, int attempt) {
  static std::atomic<unsigned long> counter{0};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::string name = ".";  // appended piecewise: GCC 12 warns falsely on "." + string
  name += path.filename().string();
  name += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
          std::to_string(attempt);
  return dir / name;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = temp_beside(path, attempt);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) fail(path, "create temporary file", errno);
  }

  auto abandon = [&](const char* step) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    fail(path, step, err);
  };
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("write");
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("fsync");
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("close");
  if (::rename(temp.c_str(), path.c_str()) != 0) abandon("rename");
}

}  // namespace normcheck
