// write_file_atomically: temporary file beside the target, write, fsync, rename.
#include "normcheck/io.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

namespace normcheck {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* step, int err) {
  throw std::runtime_error("cannot write " + path.string() + ": " + step + ": " +
                           std::strerror(err));
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// A name no other writer (thread or process) uses at the same time. The file
// is created with O_EXCL and mode 0666, so the umask applies as it would to
// any new file (mkstemp would force 0600).
std::filesystem::path temp_beside(const std::filesystem::path& path, int attempt) {
  static std::atomic<unsigned long> counter{0};
  std::string name = ".";  // appended piecewise: GCC 12 warns falsely on "." + string
  name += path.filename().string();
  name += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
          std::to_string(attempt);
  return directory_of(path) / name;
}

// ---- temporary files removed on SIGINT, SIGTERM and SIGHUP ----
// The paths being written, each with the process that registered it (a
// forked child inherits the table, and must not remove its parent's files).
// The handler reads them with atomics only: it is async-signal-safe.
struct Live {
  std::atomic<const char*> path{nullptr};
  std::atomic<pid_t> owner{0};
};
std::array<Live, 64> live_temps;
struct sigaction previous[NSIG];

extern "C" void remove_temps_and_die(int sig) {
  const pid_t self = ::getpid();
  for (Live& l : live_temps) {
    const char* p = l.path.load();
    if (p && l.owner.load() == self) ::unlink(p);
  }
  // The action there was before (the default: the process ends by this signal).
  ::sigaction(sig, &previous[sig], nullptr);
  ::raise(sig);
}

// Installed once, and only over the default action: a program's own handler stays.
void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction now {};
      if (::sigaction(sig, nullptr, &now) != 0 || now.sa_handler != SIG_DFL || (now.sa_flags & SA_SIGINFO)) continue;
      previous[sig] = now;
      struct sigaction mine {};
      mine.sa_handler = remove_temps_and_die;
      sigemptyset(&mine.sa_mask);
      ::sigaction(sig, &mine, nullptr);
    }
  });
}

// Registers a temporary file for the handler until cleared or destroyed;
// with every slot taken the file is not registered (so not removed on a signal).
class LiveTemp {
 public:
  LiveTemp() = default;
  ~LiveTemp() { clear(); }
  LiveTemp(const LiveTemp&) = delete;
  LiveTemp& operator=(const LiveTemp&) = delete;

  void set(const std::filesystem::path& p) {
    clear();
    text_ = p.native();
    for (Live& l : live_temps) {
      const char* expected = nullptr;
      if (l.path.compare_exchange_strong(expected, text_.c_str())) {
        l.owner.store(::getpid());  // the file is created only after this
        slot_ = &l;
        return;
      }
    }
  }
  void clear() {
    if (slot_) slot_->path.store(nullptr);
    slot_ = nullptr;
  }

 private:
  std::string text_;
  Live* slot_ = nullptr;
};

// ---- temporary files left by a process that was killed ----
// The pid in a name of temp_beside()'s pattern ".NAME.tmp.PID.N.A", 0 if the
// name is not of that pattern.
pid_t temp_owner(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return 0;
  std::size_t end = name.size();
  pid_t pid = 0;
  for (int field = 0; field < 3; ++field) {
    const std::size_t dot = name.rfind('.', end - 1);
    if (dot == std::string::npos || dot == 0 || dot + 1 == end) return 0;
    unsigned long value = 0;
    const auto [stop, error] = std::from_chars(name.data() + dot + 1, name.data() + end, value);
    if (error != std::errc() || stop != name.data() + end) return 0;
    if (field == 2) pid = static_cast<pid_t>(value);
    end = dot;
  }
  if (end < 5 || name.compare(end - 4, 4, ".tmp") != 0 || end - 4 < 2) return 0;
  return pid > 0 ? pid : 0;
}

// Once per directory and process: removes the temporary files of
// temp_beside()'s pattern whose process no longer exists (killed by SIGKILL,
// or by a signal before its handler ran). A live writer's files are kept.
void remove_stale_temps(const std::filesystem::path& dir) {
  static std::mutex mutex;
  static std::set<std::filesystem::path> done;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!done.insert(dir).second) return;
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // the write that follows reports what is wrong with dir
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const pid_t pid = temp_owner(name);
    if (pid != 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  install_handlers();
  remove_stale_temps(directory_of(path));
  std::filesystem::path temp;
  int fd = -1;
  LiveTemp live;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = temp_beside(path, attempt);
    live.set(temp);  // before the file exists: a signal may come between the two
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
