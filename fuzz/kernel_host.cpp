#include "kernel_host.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "host/protocol.h"
#include "normcheck/call_buffers.h"
#include "normcheck/guard_pages.h"

namespace normcheck::fuzz {

using host::BufferDesc;
using host::CallReply;
using host::CallRequest;
using host::Hello;
using host::kMagic;
using host::ListedKernel;
using host::StatusPage;

namespace {

constexpr std::size_t kInitialArena = 1 << 20;  // grows with the calls' arrays
constexpr rlim_t kHostStack = rlim_t{8} << 20;  // the main thread's stack, as a program usually has

int64_t now_ns(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return -1;
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

std::string signal_text(int sig) { return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")"; }

thread_local CallScope* t_scope = nullptr;

// What a host prints is the plugin's: shown on normcheck's stderr, each line
// prefixed, never on stdout (which carries normcheck's report).
std::mutex g_stderr_mutex;
void relay_output(int fd, std::string prefix, const std::atomic<bool>* stop) {
  std::string pending;
  const auto emit = [&](bool all) {
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos || (all && !pending.empty());) {
      const std::size_t n = nl == std::string::npos ? pending.size() : nl + 1;
      std::string line = prefix + pending.substr(0, n);
      if (line.back() != '\n') line += '\n';
      pending.erase(0, n);
      std::lock_guard<std::mutex> lock(g_stderr_mutex);
      const char* p = line.data();
      std::size_t left = line.size();
      while (left > 0) {
        const ssize_t w = write(STDERR_FILENO, p, left);
        if (w <= 0) break;
        p += w;
        left -= static_cast<std::size_t>(w);
      }
    }
  };
  char buffer[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready > 0) {
      const ssize_t r = read(fd, buffer, sizeof buffer);
      if (r <= 0) break;
      pending.append(buffer, static_cast<std::size_t>(r));
      emit(false);
    } else if (stop->load()) {
      break;  // the host is gone; what a process that escaped its group still holds open is dropped
    }
  }
  emit(true);
  close(fd);
}

// Hosts are forked from one thread that lives as long as the process:
// PR_SET_PDEATHSIG ends a host when the thread that forked it ends, which is
// meant to be normcheck's end, and a worker thread (--jobs, std::async) ends
// long before that.
pid_t fork_from_launcher(const std::function<void()>& child) {
  struct Launcher {
    std::mutex mutex;
    std::condition_variable cv;
    const std::function<void()>* task = nullptr;
    pid_t pid = 0;
    bool done = false;
  };
  static Launcher* launcher = [] {
    auto* l = new Launcher;  // never destroyed: its thread runs until the process ends
    std::thread([l] {
      std::unique_lock<std::mutex> lock(l->mutex);
      for (;;) {
        l->cv.wait(lock, [l] { return l->task != nullptr; });
        const pid_t pid = fork();
        if (pid == 0) {
          (*l->task)();
          _exit(127);
        }
        l->pid = pid;
        l->task = nullptr;
        l->done = true;
        l->cv.notify_all();
      }
    }).detach();
    return l;
  }();
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> serial(one_at_a_time);
  std::unique_lock<std::mutex> lock(launcher->mutex);
  launcher->done = false;
  launcher->task = &child;
  launcher->cv.notify_all();
  launcher->cv.wait(lock, [] { return launcher->done; });
  return launcher->pid;
}

// The host's environment: normcheck's, with glibc's checking malloc
// preloaded (libc_malloc_debug.so.0, part of libc6; glibc.malloc.check=3), so
// that a kernel that writes past a block it allocated is stopped when the
// block is freed, in the call that did it, rather than corrupting the heap
// for some later allocation to trip over. Not under AddressSanitizer, whose
// runtime must come first and checks the heap itself.
std::vector<std::string> host_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
#if !defined(__SANITIZE_ADDRESS__)
  const auto prepend = [&env](const std::string& name, const std::string& value) {
    for (std::string& entry : env)
      if (entry.rfind(name + "=", 0) == 0) {
        entry = name + "=" + value + ":" + entry.substr(name.size() + 1);
        return;
      }
    env.push_back(name + "=" + value);
  };
  prepend("LD_PRELOAD", "libc_malloc_debug.so.0");
  prepend("GLIBC_TUNABLES", "glibc.malloc.check=3");
#endif
  return env;
}

int duplicate_high(int fd) {
  // Above the descriptors the child sets up (0 to 4), so dup2 never meets its own target.
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

}  // namespace

// One host process: its channel, its arena and the thread relaying its output.
class HostProcess {
 public:
  HostProcess(const std::filesystem::path& binary, const std::filesystem::path& plugin);
  ~HostProcess();

  // The Hello frame, within `timeout_ms`; throws std::runtime_error with the
  // reason the library did not load.
  std::string read_hello(int timeout_ms);
  // One call, run `runs` times (1 or 2) on copies of the arrays as they are
  // now; the first run's outputs come back. Throws KernelCallFault. alive()
  // says whether the host survived.
  struct Outcome {
    CallReply reply;
    bool runs_differ = false;  // two runs: their outputs differ in some bit
  };
  Outcome call(uint32_t index, const Kernel& kernel, const KernelArgs& args, int timeout_ms, int runs);
  bool alive() const { return pid_ > 0; }

 private:
  struct Laid {
    CallBuffer buffer;
    std::size_t offset = 0, lead = 0, guard = 0;
  };
  void grow_arena(std::size_t bytes);
  StatusPage* status() const { return reinterpret_cast<StatusPage*>(arena_); }
  // Ends the process group and reaps the host; its wait status.
  int end();
  // Reads one frame by `deadline_ns` (CLOCK_MONOTONIC). Returns kRead, kEnded
  // (the socket's end, or a frame too large to be ours) or kLate.
  enum FrameRead { kRead, kEnded, kLate };
  FrameRead read_frame(std::string& frame, int64_t deadline_ns);
  [[noreturn]] void fail_call(const std::vector<Laid>& laid);

  pid_t pid_ = -1;
  int channel_ = -1, arena_fd_ = -1;
  unsigned char* arena_ = nullptr;
  std::size_t arena_bytes_ = 0, page_ = 4096;
  clockid_t cpu_clock_{};
  bool cpu_clock_ok_ = false;
  uint32_t seq_ = 0;  // the last call's number (StatusPage::request_seq)
  host::Watch watch_;  // of the reply
  std::atomic<bool> stop_relay_{false};
  std::thread relay_;
};

HostProcess::HostProcess(const std::filesystem::path& binary, const std::filesystem::path& plugin) {
  page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  int sv[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("cannot create a socket");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(sv[0]), close(sv[1]);
    throw std::runtime_error("cannot create a pipe");
  }
  arena_fd_ = memfd_create("normcheck-arena", MFD_CLOEXEC);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int child_channel = duplicate_high(sv[1]), child_arena = fcntl(arena_fd_, F_DUPFD_CLOEXEC, 10),
            child_out = duplicate_high(out[1]), child_in = null_fd >= 0 ? duplicate_high(null_fd) : -1;
  channel_ = sv[0];
  const auto close_child_ends = [&] {
    for (int fd : {child_channel, child_arena, child_out, child_in})
      if (fd >= 0) close(fd);
  };
  if (arena_fd_ < 0 || child_channel < 0 || child_arena < 0 || child_out < 0 || child_in < 0) {
    close_child_ends();
    close(out[0]);
    throw std::runtime_error("cannot set up the kernel host's descriptors");
  }
  grow_arena(kInitialArena);
  std::memset(arena_, 0, page_);

  // Everything the child needs, made before fork: after it, a child of a
  // process with threads may only make async-signal-safe calls.
  const std::string binary_text = binary.string(), plugin_text = plugin.string();
  char* const argv[] = {const_cast<char*>(binary_text.c_str()), const_cast<char*>(plugin_text.c_str()), nullptr};
  const std::vector<std::string> env_text = host_environment();
  std::vector<char*> envp;
  for (const std::string& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const std::function<void()> child = [&] {
    setpgid(0, 0);                           // its own group, ended as a whole
    prctl(PR_SET_PDEATHSIG, SIGKILL);        // and gone if normcheck dies
    if (getppid() != parent) _exit(127);
    dup2(child_in, STDIN_FILENO);
    dup2(child_out, STDOUT_FILENO);
    dup2(child_out, STDERR_FILENO);
    dup2(child_channel, host::kChannelFd);
    dup2(child_arena, host::kArenaFd);
    close_range(host::kArenaFd + 1, ~0u, 0);  // nothing else of normcheck's: its files, its output
    rlimit stack{};
    if (getrlimit(RLIMIT_STACK, &stack) == 0 && (stack.rlim_max == RLIM_INFINITY || stack.rlim_max >= kHostStack)) {
      stack.rlim_cur = kHostStack;
      setrlimit(RLIMIT_STACK, &stack);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execve(argv[0], argv, envp.data());
  };
  const pid_t pid = fork_from_launcher(child);
  if (pid < 0) {
    close_child_ends();
    close(out[0]);
    throw std::runtime_error("cannot fork");
  }
  setpgid(pid, pid);  // also here, so the group exists whichever runs first
  pid_ = pid;
  close_child_ends();
  cpu_clock_ok_ = clock_getcpuclockid(pid_, &cpu_clock_) == 0;
  relay_ = std::thread(relay_output, out[0], "plugin " + plugin.filename().string() + ": ", &stop_relay_);
}

HostProcess::~HostProcess() {
  end();
  if (channel_ >= 0) close(channel_);
  if (arena_) munmap(arena_, arena_bytes_);
  if (arena_fd_ >= 0) close(arena_fd_);
  stop_relay_.store(true);
  if (relay_.joinable()) relay_.join();
}

int HostProcess::end() {
  if (pid_ <= 0) return 0;
  kill(-pid_, SIGKILL);  // the host, and every process it started that stayed in its group
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  stop_relay_.store(true);
  return status;
}

void HostProcess::grow_arena(std::size_t bytes) {
  if (bytes <= arena_bytes_) return;
  bytes = std::max(bytes, arena_bytes_ * 2);
  bytes = (bytes + page_ - 1) / page_ * page_;
  if (ftruncate(arena_fd_, static_cast<off_t>(bytes)) != 0) throw std::runtime_error("cannot grow the arena");
  if (arena_) munmap(arena_, arena_bytes_);
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd_, 0);
  if (m == MAP_FAILED) throw std::runtime_error("cannot map the arena");
  arena_ = static_cast<unsigned char*>(m);
  arena_bytes_ = bytes;
}

HostProcess::FrameRead HostProcess::read_frame(std::string& frame, int64_t deadline_ns) {
  const auto read_exact = [&](char* p, std::size_t n) {
    while (n > 0) {
      const int64_t left_ns = deadline_ns - now_ns(CLOCK_MONOTONIC);
      if (left_ns <= 0) return kLate;
      pollfd pfd{channel_, POLLIN, 0};
      // Rounded up, so that a wait shorter than a millisecond still waits.
      if (poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left_ns / 1000000 + 1, 100))) <= 0) continue;
      const ssize_t r = read(channel_, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return kEnded;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
    return kRead;
  };
  uint32_t n = 0;
  if (const FrameRead r = read_exact(reinterpret_cast<char*>(&n), sizeof n); r != kRead) return r;
  if (n > host::kMaxFrame) return kEnded;
  frame.resize(n);
  return read_exact(frame.data(), n);
}

std::string HostProcess::read_hello(int timeout_ms) {
  std::string frame;
  const FrameRead r = read_frame(frame, now_ns(CLOCK_MONOTONIC) + int64_t{timeout_ms} * 1000000);
  if (r == kRead) return frame;
  const int fault = status()->fault_signal.load();
  const int status = end();
  if (r == kLate) throw std::runtime_error("the library did not finish loading within " + std::to_string(timeout_ms) + " ms");
  if (fault > 0 && fault < 65) throw std::runtime_error("the library was killed by " + signal_text(fault) + " while loading");
  if (WIFSIGNALED(status)) throw std::runtime_error("the library was killed by " + signal_text(WTERMSIG(status)) + " while loading");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw std::runtime_error("the kernel host could not be started (exit status 127)");
  throw std::runtime_error("the library exited with status " + std::to_string(WEXITSTATUS(status)) + " while loading");
}

void HostProcess::fail_call(const std::vector<Laid>& laid) {
  StatusPage* s = status();
  const int sig = s->fault_signal.load();
  const int phase = sig ? s->fault_phase.load() : s->phase.load();
  const bool in_call = phase == host::kInCall;
  const int guard = s->fault_in_guard.load();
  const bool in_guard = guard != 0, on_stack = s->fault_on_stack.load() != 0;
  const int status = end();
  const std::string when =
      in_call ? " in the kernel call"
              : " after the kernel call returned (the kernel host runs nothing but the plugin and the call "
                "protocol: the plugin's heap, or a thread it left running)";
  if (sig > 0 && sig < 65) {
    if (in_call && in_guard) {
      const std::string array = guard > 0 && static_cast<std::size_t>(guard) <= laid.size()
                                    ? "array '" + std::string(laid[static_cast<std::size_t>(guard) - 1].buffer.name) + "'"
                                    : std::string("an array");
      throw KernelCallFault("out_of_bounds", "access to a guard page past " + array + ": " + signal_text(sig) + when);
    }
    if (on_stack) throw KernelCallFault("crash", "stack overflow (the host's main thread has an 8 MiB stack): " + signal_text(sig) + when);
    throw KernelCallFault("crash", signal_text(sig) + when);
  }
  if (WIFSIGNALED(status)) throw KernelCallFault("crash", "killed by " + signal_text(WTERMSIG(status)) + when);
  throw KernelCallFault("crash", "the process exited with status " + std::to_string(WEXITSTATUS(status)) + when);
}

HostProcess::Outcome HostProcess::call(uint32_t index, const Kernel& kernel, const KernelArgs& args, int timeout_ms,
                                       int runs) {
  const std::vector<CallBuffer> buffers = call_buffers(kernel, args);
  if (runs < 1 || runs > 2 || runs * buffers.size() > static_cast<std::size_t>(host::kMaxBuffers))
    throw std::logic_error("a call with more arrays or runs than the host protocol carries");
  // Page 0 is the status page. Each run's copy of each array: a canary zone
  // of kCanaryZoneBytes before its start (a write there is out of bounds, as
  // evaluate()'s zones say), its end flush against a guard page of its own.
  std::vector<Laid> laid;
  std::size_t offset = page_;
  for (int run = 0; run < runs; ++run)
    for (const CallBuffer& b : buffers) {
      const std::size_t region = (kCanaryZoneBytes + b.bytes + page_ - 1) / page_ * page_;
      laid.push_back({b, offset, offset + region - b.bytes, offset + region});
      offset += region + page_;
    }
  grow_arena(offset);
  CallRequest rq{};
  rq.magic = kMagic;
  rq.kernel = index;
  rq.rows = args.rows;
  rq.cols = args.cols;
  rq.out_features = args.out_features;
  rq.eps = args.eps;
  rq.runs = static_cast<uint32_t>(runs);
  rq.buffers = static_cast<uint32_t>(buffers.size());
  rq.arena_bytes = arena_bytes_;
  for (std::size_t i = 0; i < laid.size(); ++i) {
    const Laid& l = laid[i];
    std::memset(arena_ + l.lead - kCanaryZoneBytes, kCanaryByte, kCanaryZoneBytes);
    if (l.buffer.bytes) std::memcpy(arena_ + l.lead, l.buffer.data, l.buffer.bytes);
    BufferDesc& d = rq.buffer[i];
    std::memcpy(d.name, l.buffer.name.data(), std::min<std::size_t>(l.buffer.name.size(), host::kNameBytes));
    d.offset = l.lead;
    d.bytes = l.buffer.bytes;
    d.guard = l.guard;
    d.output = l.buffer.output;
  }
  // The request through the status page (host/protocol.h).
  StatusPage* sp = status();
  std::memcpy(static_cast<void*>(&sp->request), &rq, sizeof rq);
  sp->runs_started.store(0);
  if (++seq_ == host::kFaulted) seq_ = 1;  // 0 is the page's start, kFaulted the fault handler's
  const uint32_t seq = seq_;
  sp->request_seq.store(seq);
  if (sp->host_sleeps.load()) host::futex_wake(sp->request_seq);

  // The watchdog: the host's CPU time since the run in progress started, so
  // that a machine busy with other work (or --jobs above its cores) gives no
  // false hang; wall-clock time only as a backstop for a call that sleeps or
  // blocks.
  int64_t cpu0 = cpu_clock_ok_ ? now_ns(cpu_clock_) : -1;
  int64_t wall0 = now_ns(CLOCK_MONOTONIC);
  uint32_t run_timed = 0;
  const int64_t cpu_limit = int64_t{timeout_ms} * 1000000;
  const int64_t wall_limit = 10 * cpu_limit + int64_t{10} * 1000000000;
  // The watch ends at any change: the reply, or the fault handler's kFaulted.
  watch_.watch(sp->reply_seq, seq - 1);
  for (bool slept = false;;) {
    const uint32_t seen = sp->reply_seq.load();
    if (seen == seq) {
      if (slept) watch_.slept();
      break;
    }
    if (seen == host::kFaulted) fail_call(laid);
    sp->normcheck_sleeps.store(1);
    if (sp->reply_seq.load() == seen) host::futex_wait(sp->reply_seq, seen, 10);
    sp->normcheck_sleeps.store(0);
    slept = true;
    if (sp->reply_seq.load() == seq) {
      watch_.slept();
      break;
    }
    // The host never writes to the socket after its greeting: readable means it ended.
    pollfd p{channel_, POLLIN, 0};
    if (poll(&p, 1, 0) != 0) fail_call(laid);
    if (const uint32_t started = sp->runs_started.load(); started > run_timed && started <= rq.runs) {
      // The host's own count, which a kernel could write: at most one restart per run.
      if (run_timed > 0) cpu0 = cpu_clock_ok_ ? now_ns(cpu_clock_) : -1, wall0 = now_ns(CLOCK_MONOTONIC);
      run_timed = started;
    }
    const int64_t cpu = cpu_clock_ok_ ? now_ns(cpu_clock_) - cpu0 : -1;
    const int64_t wall = now_ns(CLOCK_MONOTONIC) - wall0;
    if (cpu > cpu_limit || (!cpu_clock_ok_ && wall > cpu_limit)) {
      end();
      throw KernelCallFault("hang", "the kernel call used more than " + std::to_string(timeout_ms) + " ms of CPU time");
    }
    if (wall > wall_limit) {
      end();
      throw KernelCallFault("hang", "the kernel call did not return within " + std::to_string(wall_limit / 1000000000) +
                                        " s (it used " + std::to_string(std::max<int64_t>(cpu, 0) / 1000000) +
                                        " ms of CPU time: it sleeps or waits)");
    }
  }
  Outcome outcome;
  std::memcpy(&outcome.reply, static_cast<const void*>(&sp->reply), sizeof outcome.reply);
  if (outcome.reply.magic != kMagic) {
    end();
    throw KernelCallFault("crash", "the kernel host's reply was garbled (the kernel wrote to memory it was not given)");
  }
  for (const Laid& l : laid) {
    if (!std::all_of(arena_ + l.lead - kCanaryZoneBytes, arena_ + l.lead,
                     [](unsigned char b) { return b == kCanaryByte; }))
      throw KernelCallFault("out_of_bounds", "a canary byte just before array '" + std::string(l.buffer.name) +
                                                 "' changed: the kernel wrote before its start");
  }
  // The second run against the first, output by output, bit for bit.
  if (runs == 2)
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const Laid& first = laid[i];
      const Laid& second = laid[buffers.size() + i];
      if (first.buffer.output && first.buffer.bytes &&
          std::memcmp(arena_ + first.lead, arena_ + second.lead, first.buffer.bytes) != 0)
        outcome.runs_differ = true;
    }
  // The first run's outputs come back whole (an element left unwritten keeps
  // the caller's fill); an input comes back only when the kernel changed it,
  // as an in-process kernel writing its input would have.
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const Laid& l = laid[i];
    if (l.buffer.bytes && (l.buffer.output || std::memcmp(l.buffer.data, arena_ + l.lead, l.buffer.bytes) != 0))
      std::memcpy(l.buffer.data, arena_ + l.lead, l.buffer.bytes);
  }
  return outcome;
}

// ---- CallScope ----

CallScope::CallScope(int timeout, int runs_per_call)
    : timeout_ms(timeout), runs(runs_per_call), outer_(t_scope) {
  t_scope = this;
}
CallScope::~CallScope() { t_scope = outer_; }
CallScope* CallScope::current() { return t_scope; }

// ---- HostedPlugin ----

std::unique_ptr<HostProcess> HostedPlugin::start_host() const {
  return std::make_unique<HostProcess>(kernel_host_binary(), path_);
}

HostedPlugin::HostedPlugin(const std::filesystem::path& absolute_path, int load_timeout_ms)
    : path_(absolute_path), load_timeout_ms_(load_timeout_ms) {
  auto host = start_host();
  const std::string frame = host->read_hello(load_timeout_ms_);
  Hello hello{};
  if (frame.size() < sizeof hello) throw std::runtime_error("the kernel host sent a short greeting");
  std::memcpy(&hello, frame.data(), sizeof hello);
  if (hello.magic != kMagic) throw std::runtime_error("the kernel host's greeting was garbled (the library wrote to its channel)");
  if (hello.refused) throw std::runtime_error(frame.substr(sizeof hello));
  std::size_t at = sizeof hello;
  for (uint32_t i = 0; i < hello.count; ++i) {
    ListedKernel e{};
    if (frame.size() - at < sizeof e) throw std::runtime_error("the kernel host's listing was cut short");
    std::memcpy(&e, frame.data() + at, sizeof e);
    at += sizeof e;
    if (frame.size() - at < e.name_bytes) throw std::runtime_error("the kernel host's listing was cut short");
    std::string name = frame.substr(at, e.name_bytes);
    at += e.name_bytes;
    if (frame.size() - at < e.domain_bytes) throw std::runtime_error("the kernel host's listing was cut short");
    listing_.push_back({std::move(name), e.op, e.dtype, e.extension != 0, e.has_fn != 0, e.has_name != 0,
                        e.has_domain != 0, frame.substr(at, e.domain_bytes)});
    at += e.domain_bytes;
  }
  before_ = hello.before;
  after_ = hello.after;
  idle_.push_back(std::move(host));
}

HostedPlugin::~HostedPlugin() = default;

std::string HostedPlugin::load_fp_change() const {
  return before_ == after_ ? std::string() : host::describe_fp_change(before_, after_);
}

void HostedPlugin::call(uint32_t index, const Kernel& kernel, const KernelArgs& args) {
  std::unique_ptr<HostProcess> host;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      host = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!host) {
    // A host like the first: the library must load the same way again.
    try {
      host = start_host();
      const std::string frame = host->read_hello(load_timeout_ms_);
      Hello hello{};
      if (frame.size() < sizeof hello) throw std::runtime_error("the kernel host sent a short greeting");
      std::memcpy(&hello, frame.data(), sizeof hello);
      if (hello.magic != kMagic || hello.refused || hello.count != listing_.size())
        throw std::runtime_error("the library did not load as it did the first time");
    } catch (const std::runtime_error& e) {
      throw KernelCallFault("crash", std::string("starting a kernel host for the call failed: ") + e.what());
    }
  }
  CallScope* scope = CallScope::current();
  try {
    const HostProcess::Outcome outcome =
        host->call(index, kernel, args, scope ? scope->timeout_ms : 2000, scope ? scope->runs : 1);
    if (scope && outcome.reply.fp_changed) scope->fp_change = host::describe_fp_change(after_, outcome.reply.during);
    if (scope && outcome.runs_differ) scope->runs_differ = true;
  } catch (const KernelCallFault&) {
    if (host->alive()) {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(std::move(host));
    }
    throw;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(host));
}

// ---- rows ----

namespace {

struct RemoteEntry {
  HostedPlugin* plugin;
  uint32_t index;
};

// The contexts of the remote rows, for the process's life (rows point into it).
std::deque<RemoteEntry>& remote_entries() {
  static std::deque<RemoteEntry> entries;
  return entries;
}

void call_remote(const void* context, const Kernel& kernel, const KernelArgs& args) {
  const auto* e = static_cast<const RemoteEntry*>(context);
  e->plugin->call(e->index, kernel, args);
}

}  // namespace

RemoteKernelFn remote_fn(HostedPlugin& plugin, uint32_t index) {
  remote_entries().push_back({&plugin, index});
  return {call_remote, &remote_entries().back()};
}

const HostedPlugin* hosted_plugin_of(const Kernel& kernel) {
  const auto* remote = std::get_if<RemoteKernelFn>(&kernel.fn);
  if (!remote || remote->call != call_remote) return nullptr;
  return static_cast<const RemoteEntry*>(remote->context)->plugin;
}

std::filesystem::path kernel_host_binary() {
  if (const char* env = std::getenv("NORMCHECK_KERNEL_HOST"); env && *env) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& candidate : {exe.parent_path() / "normcheck_kernel_host",
                                  exe.parent_path() / "../libexec/normcheck/normcheck_kernel_host"})
      if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
  }
  return NORMCHECK_KERNEL_HOST_BUILT;
}

}  // namespace normcheck::fuzz
