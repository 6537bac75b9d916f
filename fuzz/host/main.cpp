// normcheck_kernel_host: the process a plugin's code runs in (protocol.h).
//
// normcheck starts it by exec, so it holds nothing of normcheck's but this
// file, invoke() and the plugin ABI's tables (normcheck_call): the plugin's
// constructors, its kernels, their threads and whatever they leave behind run
// here and nowhere else. It loads the library, reports the kernels it lists
// and the floating-point control state before and after loading, then runs
// calls on request on the main thread (its usual 8 MiB stack), each array of
// the call ending flush against a page made inaccessible, a batch of calls
// per request (protocol.h). A fault is recorded in the status page (which phase, whether the address lay
// in a guard page or just below the stack) before the host exits.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <exception>
#include <optional>
#include <deque>
#include <string>
#include <vector>

#include "normcheck/call_buffers.h"
#include "normcheck/invoke.h"
#include "normcheck/op_spec.h"
#include "fault_signals.h"
#include "library.h"
#include "plugin_abi.h"
#include "protocol.h"

namespace normcheck::host {
namespace {

StatusPage* g_status = nullptr;
std::size_t g_page = 4096;

// The guard pages of the call in progress, for the fault handler.
uintptr_t g_guard_lo[kMaxBuffers], g_guard_hi[kMaxBuffers];
volatile int g_guards = 0;
// The lowest address the main thread's stack may grow to.
uintptr_t g_stack_lowest = 0;

void on_fault(int sig, siginfo_t* info, void*) {
  const auto a = reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr);
  const bool memory = sig == SIGSEGV || sig == SIGBUS;
  int in_guard = 0;
  for (int i = 0; i < g_guards; ++i)
    if (memory && a >= g_guard_lo[i] && a < g_guard_hi[i]) in_guard = i + 1;
  // A stack overflow faults at or below the lowest address the stack may
  // use: the access that crossed it (a push, or a large frame's first touch,
  // up to its size below). 64 MiB covers any frame that overflows 8 MiB.
  constexpr uintptr_t kBelow = uintptr_t{64} << 20, kAbove = uintptr_t{64} << 10;
  const bool on_stack = memory && g_stack_lowest != 0 && a + kBelow >= g_stack_lowest && a < g_stack_lowest + kAbove;
  g_status->fault_address.store(a);
  g_status->fault_in_guard.store(in_guard);
  g_status->fault_on_stack.store(on_stack && in_guard == 0);
  g_status->fault_phase.store(g_status->phase.load());
  g_status->fault_signal.store(sig);
  g_status->reply_seq.store(kFaulted);  // normcheck need not wait for the socket's end
  futex_wake(g_status->reply_seq);
  _exit(kFaultExit);
}

void find_main_stack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* lowest = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &lowest, &size) == 0) g_stack_lowest = reinterpret_cast<uintptr_t>(lowest);
  pthread_attr_destroy(&attr);
}

bool write_all(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(kChannelFd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool send_frame(const std::string& bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  return write_all(&n, sizeof n) && write_all(bytes.data(), bytes.size());
}

template <class T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

unsigned char* g_arena = nullptr;
std::size_t g_arena_bytes = 0;
// The arena offsets of the pages now inaccessible, sorted. A guard page stays
// so from one batch to the next until an array of a later batch lies on it:
// normcheck places a batch's arrays where the last batch's were, so that a
// batch costs mprotect only for the places it adds.
std::vector<uint64_t> g_protected;

void map_arena(std::size_t bytes) {
  g_protected.clear();  // a new mapping is accessible throughout
  if (g_arena) munmap(g_arena, g_arena_bytes);
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kArenaFd, 0);
  if (m == MAP_FAILED) _exit(4);
  g_arena = static_cast<unsigned char*>(m);
  g_arena_bytes = bytes;
  g_status = reinterpret_cast<StatusPage*>(g_arena);
}

// The next request's number (after `last`); exits when normcheck is gone.
uint32_t wait_for_request(uint32_t last) {
  static Watch watch;
  if (watch.watch(g_status->request_seq, last)) return g_status->request_seq.load();
  for (;;) {
    const uint32_t seq = g_status->request_seq.load();
    if (seq != last) {
      watch.slept();
      return seq;
    }
    g_status->host_sleeps.store(1);
    if (g_status->request_seq.load() == last) futex_wait(g_status->request_seq, last, 200);
    g_status->host_sleeps.store(0);
    pollfd p{kChannelFd, POLLIN, 0};
    if (poll(&p, 1, 0) != 0) _exit(0);  // the socket ended (normcheck never writes to it): nobody is waiting
  }
}

// The batch's arrays accessible and their guard pages not: the pages of the
// protected set that an array (or its canary zone) now lies on are opened,
// the guards not yet protected are closed.
void lay_guards(const BatchRequest& rq) {
  std::vector<uint64_t> guards, opened;
  for (uint32_t c = 0; c < rq.calls; ++c) {
    const CallRequest& call = rq.call[c];
    for (uint32_t i = 0; i < call.runs * call.buffers; ++i) {
      const BufferDesc& b = call.buffer[i];
      guards.push_back(b.guard);
      for (auto p = std::lower_bound(g_protected.begin(), g_protected.end(), b.start / g_page * g_page);
           p != g_protected.end() && *p < b.guard; ++p)
        opened.push_back(*p);
    }
  }
  std::sort(guards.begin(), guards.end());
  guards.erase(std::unique(guards.begin(), guards.end()), guards.end());
  std::sort(opened.begin(), opened.end());
  opened.erase(std::unique(opened.begin(), opened.end()), opened.end());
  for (const uint64_t page : opened)
    if (mprotect(g_arena + page, g_page, PROT_READ | PROT_WRITE) != 0) _exit(4);
  std::vector<uint64_t> kept;
  std::set_difference(g_protected.begin(), g_protected.end(), opened.begin(), opened.end(), std::back_inserter(kept));
  for (const uint64_t page : guards)
    if (!std::binary_search(kept.begin(), kept.end(), page) && mprotect(g_arena + page, g_page, PROT_NONE) != 0)
      _exit(4);
  g_protected.clear();
  std::set_union(kept.begin(), kept.end(), guards.begin(), guards.end(), std::back_inserter(g_protected));
}

// A copy of the request: the kernels share the arena and could change it under us.
BatchRequest g_request;

[[noreturn]] void serve(const std::vector<Kernel>& rows, FpControl loaded) {
  uint32_t last = 0;
  const uint64_t arrays = arrays_offset(g_page);
  for (;;) {
    last = wait_for_request(last);
    const auto* shared = reinterpret_cast<const BatchRequest*>(g_arena + kRequestOffset);
    std::memcpy(static_cast<void*>(&g_request), shared, offsetof(BatchRequest, call));
    BatchRequest& rq = g_request;
    if (rq.magic != kMagic || rq.calls < 1 || rq.calls > kMaxCalls) _exit(3);
    std::memcpy(static_cast<void*>(rq.call), shared->call, rq.calls * sizeof(CallRequest));
    if (rq.arena_bytes > g_arena_bytes) map_arena(rq.arena_bytes);
    for (uint32_t c = 0; c < rq.calls; ++c) {
      const CallRequest& call = rq.call[c];
      if (call.kernel >= rows.size() || call.runs < 1 || call.runs > 2 || call.runs * call.buffers > kMaxBuffers)
        _exit(3);
      for (uint32_t i = 0; i < call.runs * call.buffers; ++i) {
        const BufferDesc& b = call.buffer[i];
        if (b.start < arrays || b.start > b.offset || b.offset + b.bytes > b.guard || b.guard + g_page > g_arena_bytes ||
            b.guard % g_page != 0)
          _exit(3);
      }
    }
    lay_guards(rq);
    auto* replies = reinterpret_cast<CallReply*>(g_arena + kReplyOffset);
    uint32_t runs_started = 0;
    for (uint32_t c = 0; c < rq.calls; ++c) {
      const CallRequest& call = rq.call[c];
      const uint32_t total = call.runs * call.buffers;
      for (uint32_t i = 0; i < total; ++i) {
        g_guard_lo[i] = reinterpret_cast<uintptr_t>(g_arena + call.buffer[i].guard);
        g_guard_hi[i] = g_guard_lo[i] + g_page;
      }
      g_guards = static_cast<int>(total);
      bool fp_changed = false;
      FpControl during = loaded;
      for (uint32_t run = 0; run < call.runs; ++run) {
        KernelArgs args{.rows = call.rows,
                        .cols = call.cols,
                        .eps = call.eps,
                        .row_stride = call.row_stride,
                        .out_features = call.out_features};
        for (uint32_t i = run * call.buffers; i < (run + 1) * call.buffers; ++i) {
          const BufferDesc& b = call.buffer[i];
          if (!bind_call_buffer(args, std::string_view(b.name, strnlen(b.name, kNameBytes)), g_arena + b.offset))
            _exit(3);
        }
        write_fp_control(loaded);
        g_status->runs_started.store(++runs_started);
        g_status->phase.store(kInCall);
        try {
          invoke(rows[call.kernel], args);
        } catch (...) {
          _exit(3);  // invoke() throws only on a row whose function has the wrong type: not the kernel's doing
        }
        g_status->phase.store(kIdle);
        const FpControl after_run = read_fp_control();
        if (!(after_run == loaded) && !fp_changed) fp_changed = true, during = after_run;
      }
      write_fp_control(loaded);
      g_guards = 0;
      const CallReply reply{kMagic, fp_changed ? 1u : 0u, during};
      std::memcpy(static_cast<void*>(&replies[c]), &reply, sizeof reply);
      g_status->calls_done.store(c + 1);
    }
    g_status->reply_seq.store(last);
    if (g_status->normcheck_sleeps.load()) futex_wake(g_status->reply_seq);
  }
}

}  // namespace
}  // namespace normcheck::host

int main(int argc, char** argv) {
  using namespace normcheck;
  using namespace normcheck::host;
  if (argc != 2) return 2;
  g_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  struct stat st {};
  if (fstat(kArenaFd, &st) != 0 || st.st_size < static_cast<off_t>(g_page)) return 2;
  map_arena(static_cast<std::size_t>(st.st_size));
  g_status->phase.store(kLoading);
  catch_fault_signals(on_fault);
  find_main_stack();

  const FpControl before = read_fp_control();
  std::vector<LibraryKernel> listed;
  const std::string refused = open_library(argv[1], listed);
  const FpControl after = read_fp_control();
  g_status->phase.store(kIdle);

  std::string frame;
  append(frame, Hello{kMagic, refused.empty() ? 0u : 1u, static_cast<uint32_t>(listed.size()), before, after});
  if (!refused.empty()) {
    frame += refused;
    send_frame(frame);
    _exit(0);
  }
  std::vector<Kernel> rows;
  std::deque<OpSpec> specs;  // the version-2 rows' specs (their rows point here)
  for (const LibraryKernel& e : listed) {
    append(frame, ListedKernel{e.op, e.dtype, e.extension, e.v2, e.fn != nullptr, e.has_name, e.has_spec,
                               e.has_domain, static_cast<uint32_t>(e.name.size()),
                               static_cast<uint32_t>(e.spec.size()), static_cast<uint32_t>(e.domain.size())});
    frame += e.name;
    frame += e.spec;
    frame += e.domain;
    // normcheck refuses the library when an entry is not callable; until it
    // says so, such an entry is a row that is never asked for.
    Kernel k{.name = "", .op = Op::layernorm_fwd, .origin = Origin::plugin, .dtype = DType::f32,
             .algorithm = "", .fn = {}, .bound = nullptr};
    if (e.v2) {
      if (const SpecParse p = parse_spec(e.spec); p.spec && e.fn) {
        k.spec = &specs.emplace_back(*p.spec);
        k.op = op_of(*p.spec);
        k.dtype = p.spec->dtype_of(TensorName::x);
        k.fn = reinterpret_cast<SpecKernelFn>(e.fn);
        k.takes_row_stride = true;
      }
    } else {
      const std::optional<Op> op = host::op_of(e.op);
      const std::optional<DType> dtype = dtype_of(e.dtype);
      if (op && dtype && e.fn) {
        k.op = *op;
        k.dtype = *dtype;
        k.fn = typed_fn(*op, *dtype, e.fn);
      }
    }
    rows.push_back(k);
  }
  if (frame.size() > kMaxFrame || !send_frame(frame)) _exit(0);
  serve(rows, after);
}
