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
#include <bit>
#include <cstddef>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "call_batch.h"
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
  // A call of a batch as the host answered it.
  struct Ran {
    CallReply reply{};
    bool runs_differ = false;  // two runs: their outputs differ in some bit
    std::optional<KernelCallFault> fault;
  };
  HostProcess(const std::filesystem::path& binary, const std::filesystem::path& plugin);
  ~HostProcess();

  // The Hello frame, within `timeout_ms`; throws std::runtime_error with the
  // reason the library did not load.
  std::string read_hello(int timeout_ms);
  // Runs a prefix of `calls` in one round trip, each call `runs` times (1
  // or 2) on copies of its arrays as they are now (the first run's outputs
  // come back): as many calls as the request and the arena's budget hold, at
  // least one. Fills results[i] of each call run and returns how many ran;
  // when a call ended the host (alive() false), it is the last of them.
  std::size_t run(std::span<const HostCall> calls, std::span<Ran> results);
  bool alive() const { return pid_ > 0; }

 private:
  struct Laid {
    CallBuffer buffer;
    std::size_t start = 0, lead = 0, guard = 0;  // the canary zone, the array, its guard page
  };
  void grow_arena(std::size_t bytes);
  StatusPage* status() const { return reinterpret_cast<StatusPage*>(arena_); }
  // Ends the process group and reaps the host; its wait status.
  int end();
  // Reads one frame by `deadline_ns` (CLOCK_MONOTONIC). Returns kRead, kEnded
  // (the socket's end, or a frame too large to be ours) or kLate.
  enum FrameRead { kRead, kEnded, kLate };
  FrameRead read_frame(std::string& frame, int64_t deadline_ns);
  // The fault the host recorded (or its exit), for the call whose arrays are
  // `laid`; ends the host.
  KernelCallFault fault_of(const std::vector<Laid>& laid);
  // The guard page of a place for `bytes` (a canary zone and an array) that
  // this batch has not taken yet.
  std::size_t place(std::size_t bytes);
  // A completed call's outputs back to its arrays, after its canaries and its
  // two runs are compared.
  void take_outputs(const std::vector<Laid>& laid, std::size_t buffers, int runs, Ran& ran) const;

  pid_t pid_ = -1;
  int channel_ = -1, arena_fd_ = -1;
  unsigned char* arena_ = nullptr;
  std::size_t arena_bytes_ = 0, page_ = 4096;
  clockid_t cpu_clock_{};
  bool cpu_clock_ok_ = false;
  uint32_t seq_ = 0;  // the last batch's number (StatusPage::request_seq)
  // The places arrays are laid in, by their data pages (a power of two):
  // the guard page's offset of each. They are kept from batch to batch, so
  // that the host's guard pages stay where they are; a batch takes them in
  // order (used_), and adds places at the arena's end (end_) when it needs more.
  std::map<std::size_t, std::vector<std::size_t>> places_;
  std::map<std::size_t, std::size_t> used_;
  std::size_t end_ = 0;
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

// A call's CPU-time limit: its timeout_ms for up to 2^20 elements, growing in
// proportion beyond that. A kernel's work is linear in its elements, so a
// 32768 x 768 batch of severity rows (24 times 2^20) is given 24 times the
// timeout, and a kernel that never returns is a hang at every size.
namespace {
int64_t call_limit_ms(const HostCall& call) {
  const KernelArgs& a = *call.args;
  const uint64_t width = static_cast<uint64_t>(std::max<int64_t>({a.cols, a.out_features, 1}));
  const uint64_t elements = static_cast<uint64_t>(std::max<int64_t>(a.rows, 1)) * width;
  const uint64_t units = std::max<uint64_t>(1, (elements + (uint64_t{1} << 20) - 1) >> 20);
  return int64_t{std::max(1, call.timeout_ms)} * static_cast<int64_t>(units);
}
}  // namespace

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

KernelCallFault HostProcess::fault_of(const std::vector<Laid>& laid) {
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
      return KernelCallFault("out_of_bounds", "access to a guard page past " + array + ": " + signal_text(sig) + when);
    }
    if (on_stack) return KernelCallFault("crash", "stack overflow (the host's main thread has an 8 MiB stack): " + signal_text(sig) + when);
    return KernelCallFault("crash", signal_text(sig) + when);
  }
  if (WIFSIGNALED(status)) return KernelCallFault("crash", "killed by " + signal_text(WTERMSIG(status)) + when);
  return KernelCallFault("crash", "the process exited with status " + std::to_string(WEXITSTATUS(status)) + when);
}

std::size_t HostProcess::place(std::size_t bytes) {
  const std::size_t pages = std::bit_ceil((bytes + page_ - 1) / page_);
  std::vector<std::size_t>& kept = places_[pages];
  std::size_t& used = used_[pages];
  if (used == kept.size()) {
    kept.push_back(end_ + pages * page_);
    end_ += (pages + 1) * page_;
  }
  return kept[used++];
}

void HostProcess::take_outputs(const std::vector<Laid>& laid, std::size_t buffers, int runs, Ran& ran) const {
  for (const Laid& l : laid)
    if (!std::all_of(arena_ + l.start, arena_ + l.lead, [](unsigned char b) { return b == kCanaryByte; })) {
      ran.fault.emplace("out_of_bounds", "a canary byte just before array '" + std::string(l.buffer.name) +
                                             "' changed: the kernel wrote before its start");
      return;
    }
  // The second run against the first, output by output, bit for bit.
  if (runs == 2)
    for (std::size_t i = 0; i < buffers; ++i) {
      const Laid& first = laid[i];
      const Laid& second = laid[buffers + i];
      if (first.buffer.output && first.buffer.bytes &&
          std::memcmp(arena_ + first.lead, arena_ + second.lead, first.buffer.bytes) != 0)
        ran.runs_differ = true;
    }
  // The first run's outputs come back whole (an element left unwritten keeps
  // the caller's fill); an input comes back only when the kernel changed it,
  // as an in-process kernel writing its input would have.
  for (std::size_t i = 0; i < buffers; ++i) {
    const Laid& l = laid[i];
    if (l.buffer.bytes && (l.buffer.output || std::memcmp(l.buffer.data, arena_ + l.lead, l.buffer.bytes) != 0))
      std::memcpy(l.buffer.data, arena_ + l.lead, l.buffer.bytes);
  }
}

std::size_t HostProcess::run(std::span<const HostCall> calls, std::span<Ran> results) {
  // Each run's copy of each array: a canary zone of kCanaryZoneBytes before
  // its start (a write there is out of bounds, as evaluate()'s zones say),
  // its end flush against a guard page of its own. A batch takes calls while
  // their places stay within kBatchBytes (the first call always): a batch of
  // wide rows then takes a few round trips, which cost little beside its
  // calls, and the arena (memory the host keeps) stays small.
  constexpr std::size_t kBatchBytes = std::size_t{32} << 20;
  if (end_ == 0) end_ = host::arrays_offset(page_);
  used_.clear();
  std::vector<std::vector<Laid>> laid;
  std::vector<std::size_t> buffer_counts;
  std::size_t batch_bytes = 0;
  for (const HostCall& c : calls) {
    if (laid.size() == host::kMaxCalls || (!laid.empty() && batch_bytes > kBatchBytes)) break;
    const std::vector<CallBuffer> buffers = call_buffers(*c.kernel, *c.args);
    if (c.runs < 1 || c.runs > 2 || c.runs * buffers.size() > static_cast<std::size_t>(host::kMaxBuffers))
      throw std::logic_error("a call with more arrays or runs than the host protocol carries");
    std::vector<Laid>& call = laid.emplace_back();
    for (int run = 0; run < c.runs; ++run)
      for (const CallBuffer& b : buffers) {
        const std::size_t guard = place(kCanaryZoneBytes + b.bytes);
        call.push_back({b, guard - b.bytes - kCanaryZoneBytes, guard - b.bytes, guard});
        batch_bytes += kCanaryZoneBytes + b.bytes;
      }
    buffer_counts.push_back(buffers.size());
  }
  grow_arena(end_);
  auto* rq = reinterpret_cast<host::BatchRequest*>(arena_ + host::kRequestOffset);
  rq->magic = kMagic;
  rq->calls = static_cast<uint32_t>(laid.size());
  rq->arena_bytes = arena_bytes_;
  uint32_t total_runs = 0;
  for (std::size_t c = 0; c < laid.size(); ++c) {
    const HostCall& call = calls[c];
    host::CallRequest& r = rq->call[c];
    std::memset(static_cast<void*>(&r), 0, offsetof(host::CallRequest, buffer));
    r.kernel = call.index;
    r.runs = static_cast<uint32_t>(call.runs);
    r.buffers = static_cast<uint32_t>(buffer_counts[c]);
    r.eps = call.args->eps;
    r.rows = call.args->rows;
    r.cols = call.args->cols;
    r.out_features = call.args->out_features;
    r.row_stride = call.args->row_stride;
    total_runs += r.runs;
    for (std::size_t i = 0; i < laid[c].size(); ++i) {
      const Laid& l = laid[c][i];
      std::memset(arena_ + l.start, kCanaryByte, kCanaryZoneBytes);
      if (l.buffer.bytes) std::memcpy(arena_ + l.lead, l.buffer.data, l.buffer.bytes);
      BufferDesc& d = r.buffer[i];
      d = BufferDesc{};
      std::memcpy(d.name, l.buffer.name.data(), std::min<std::size_t>(l.buffer.name.size(), host::kNameBytes));
      d.start = l.start;
      d.offset = l.lead;
      d.bytes = l.buffer.bytes;
      d.guard = l.guard;
      d.output = l.buffer.output;
    }
  }
  // The request through the status page (host/protocol.h).
  StatusPage* sp = status();
  sp->runs_started.store(0);
  sp->calls_done.store(0);
  if (++seq_ == host::kFaulted) seq_ = 1;  // 0 is the page's start, kFaulted the fault handler's
  const uint32_t seq = seq_;
  sp->request_seq.store(seq);
  if (sp->host_sleeps.load()) host::futex_wake(sp->request_seq);

  // The call a run of the batch belongs to (runs count from 1).
  const auto call_of_run = [&](uint32_t run) {
    for (std::size_t c = 0; c < laid.size(); ++c) {
      if (run <= static_cast<uint32_t>(calls[c].runs)) return c;
      run -= static_cast<uint32_t>(calls[c].runs);
    }
    return laid.size() - 1;
  };
  // The call that ended the host: the one in progress, else the next one
  // (the last one when all had returned).
  const auto ended_at = [&] {
    return std::min<std::size_t>(sp->calls_done.load(), laid.size() - 1);
  };
  // The watchdog, per run: the host's CPU time since the run in progress
  // started, so that a machine busy with other work (or --jobs above its
  // cores) gives no false hang; wall-clock time only as a backstop for a
  // call that sleeps or blocks.
  int64_t cpu0 = cpu_clock_ok_ ? now_ns(cpu_clock_) : -1;
  int64_t wall0 = now_ns(CLOCK_MONOTONIC);
  uint32_t run_timed = 0;
  std::size_t failed = laid.size();  // the call that ended the host, if one did
  // The watch ends at any change: the reply, or the fault handler's kFaulted.
  watch_.watch(sp->reply_seq, seq - 1);
  for (bool slept = false;;) {
    const uint32_t seen = sp->reply_seq.load();
    if (seen == seq) {
      if (slept) watch_.slept();
      break;
    }
    if (seen == host::kFaulted) {
      failed = ended_at();
      results[failed].fault = fault_of(laid[failed]);
      break;
    }
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
    if (poll(&p, 1, 0) != 0) {
      failed = ended_at();
      results[failed].fault = fault_of(laid[failed]);
      break;
    }
    if (const uint32_t started = sp->runs_started.load(); started > run_timed && started <= total_runs) {
      // The host's own count, which a kernel could write: at most one restart per run.
      if (run_timed > 0) cpu0 = cpu_clock_ok_ ? now_ns(cpu_clock_) : -1, wall0 = now_ns(CLOCK_MONOTONIC);
      run_timed = started;
    }
    const std::size_t timed = call_of_run(std::max<uint32_t>(run_timed, 1));
    const int64_t limit_ms = call_limit_ms(calls[timed]);
    const int64_t cpu_limit = limit_ms * 1000000;
    const int64_t wall_limit = 10 * cpu_limit + int64_t{10} * 1000000000;
    const int64_t cpu = cpu_clock_ok_ ? now_ns(cpu_clock_) - cpu0 : -1;
    const int64_t wall = now_ns(CLOCK_MONOTONIC) - wall0;
    if (cpu > cpu_limit || (!cpu_clock_ok_ && wall > cpu_limit)) {
      end();
      failed = timed;
      results[failed].fault.emplace("hang", "the kernel call used more than " + std::to_string(limit_ms) + " ms of CPU time");
      break;
    }
    if (wall > wall_limit) {
      end();
      failed = timed;
      results[failed].fault.emplace("hang", "the kernel call did not return within " +
                                                std::to_string(wall_limit / 1000000000) + " s (it used " +
                                                std::to_string(std::max<int64_t>(cpu, 0) / 1000000) +
                                                " ms of CPU time: it sleeps or waits)");
      break;
    }
  }
  // The calls before the one that ended the host returned: theirs are
  // judged as any call's.
  const auto* replies = reinterpret_cast<const CallReply*>(arena_ + host::kReplyOffset);
  for (std::size_t c = 0; c < std::min(failed, laid.size()); ++c) {
    Ran& ran = results[c];
    std::memcpy(&ran.reply, static_cast<const void*>(&replies[c]), sizeof ran.reply);
    if (ran.reply.magic != kMagic) {
      // The kernel wrote to memory it was not given: nothing after it is trusted.
      end();
      ran.fault.emplace("crash", "the kernel host's reply was garbled (the kernel wrote to memory it was not given)");
      return c + 1;
    }
    take_outputs(laid[c], buffer_counts[c], calls[c].runs, ran);
  }
  return failed < laid.size() ? failed + 1 : laid.size();
}

// ---- CallScope ----

CallScope::CallScope(int timeout, int runs_per_call)
    : timeout_ms(timeout), runs(runs_per_call), outer_(t_scope) {
  t_scope = this;
}
CallScope::~CallScope() { t_scope = outer_; }
CallScope* CallScope::current() { return t_scope; }
CallScope* CallScope::exchange_current(CallScope* scope) { return std::exchange(t_scope, scope); }

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
    if (frame.size() - at < static_cast<std::size_t>(e.name_bytes) + e.spec_bytes + e.domain_bytes)
      throw std::runtime_error("the kernel host's listing was cut short");
    Entry entry;
    entry.name = frame.substr(at, e.name_bytes);
    entry.spec = frame.substr(at + e.name_bytes, e.spec_bytes);
    entry.domain = frame.substr(at + e.name_bytes + e.spec_bytes, e.domain_bytes);
    entry.op = e.op, entry.dtype = e.dtype;
    entry.extension = e.extension != 0, entry.v2 = e.v2 != 0;
    entry.has_fn = e.has_fn != 0, entry.has_name = e.has_name != 0;
    entry.has_spec = e.has_spec != 0, entry.has_domain = e.has_domain != 0;
    listing_.push_back(std::move(entry));
    at += static_cast<std::size_t>(e.name_bytes) + e.spec_bytes + e.domain_bytes;
  }
  before_ = hello.before;
  after_ = hello.after;
  idle_.push_back(std::move(host));
}

HostedPlugin::~HostedPlugin() = default;

std::string HostedPlugin::load_fp_change() const {
  return before_ == after_ ? std::string() : host::describe_fp_change(before_, after_);
}

std::unique_ptr<HostProcess> HostedPlugin::take_host() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<HostProcess> host = std::move(idle_.back());
      idle_.pop_back();
      return host;
    }
  }
  // A host like the first: the library must load the same way again.
  try {
    std::unique_ptr<HostProcess> host = start_host();
    const std::string frame = host->read_hello(load_timeout_ms_);
    Hello hello{};
    if (frame.size() < sizeof hello) throw std::runtime_error("the kernel host sent a short greeting");
    std::memcpy(&hello, frame.data(), sizeof hello);
    if (hello.magic != kMagic || hello.refused || hello.count != listing_.size())
      throw std::runtime_error("the library did not load as it did the first time");
    return host;
  } catch (const std::runtime_error& e) {
    throw KernelCallFault("crash", std::string("starting a kernel host for the call failed: ") + e.what());
  }
}

std::vector<HostCallResult> HostedPlugin::run_calls(std::span<const HostCall> calls) {
  std::vector<HostCallResult> results(calls.size());
  if (calls.empty()) return results;
  std::unique_ptr<HostProcess> host;
  try {
    host = take_host();
  } catch (const KernelCallFault& fault) {
    results[0].ran = true;
    results[0].fault = fault;
    return results;
  }
  std::vector<HostProcess::Ran> ran(calls.size());
  for (std::size_t next = 0; next < calls.size() && host->alive();) {
    const std::size_t n = host->run(calls.subspan(next), std::span(ran).subspan(next));
    for (std::size_t i = next; i < next + n; ++i) {
      HostCallResult& r = results[i];
      r.ran = true;
      r.fault = std::move(ran[i].fault);
      r.runs_differ = ran[i].runs_differ;
      if (!r.fault && ran[i].reply.fp_changed) r.fp_change = host::describe_fp_change(after_, ran[i].reply.during);
    }
    next += n;
  }
  if (host->alive()) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(host));
  }
  return results;
}

void HostedPlugin::call(uint32_t index, const Kernel& kernel, const KernelArgs& args) {
  CallScope* scope = CallScope::current();
  const HostCall call{index, &kernel, &args, scope ? scope->timeout_ms : 2000, scope ? scope->runs : 1};
  HostCallResult result;
  if (!park_call(*this, call, result)) result = run_calls(std::span(&call, 1))[0];
  if (result.fault) throw *result.fault;
  if (scope && !result.fp_change.empty()) scope->fp_change = result.fp_change;
  if (scope && result.runs_differ) scope->runs_differ = true;
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
