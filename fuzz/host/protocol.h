// What normcheck and a kernel host (main.cpp) say to each other.
//
// The host is started by exec with three descriptors: kChannelFd, a stream
// socket, and kArenaFd, a memfd of shared memory holding the status page
// (page 0), a batch's request and replies (from kRequestOffset) and the
// calls' arrays (after them). Its stdout and stderr are a pipe normcheck
// reads and shows as the plugin's output.
//
//   host -> normcheck, on the socket: one frame (a uint32 length, then the
//     bytes): Hello, then the ListedKernel entries or the reason it refused;
//   then batches of calls (BatchRequest, one CallReply per call), announced
//     through the status page, until normcheck closes the socket or ends the
//     host's process group. The socket's end tells each side the other is gone.
//
// A batch is one round trip for many calls (AFL's persistent mode has the
// same cost model): the host runs its calls in order and answers once, and
// says in the status page which call it is in, so that a crash, a hang or an
// access to a guard page is the call's own, never its batch's.
//
// Everything the host sends or writes can also have been written by the
// plugin it loaded: normcheck checks each field's range and treats a message
// it cannot parse as the host's failure, never as data.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "fp_control.h"

namespace normcheck::host {

inline constexpr int kChannelFd = 3;
inline constexpr int kArenaFd = 4;
// Changes with the protocol, so that a host of another build (NORMCHECK_KERNEL_HOST)
// is refused at its greeting: "nch2", the version with batches.
inline constexpr uint32_t kMagic = 0x6e636832u;
inline constexpr uint32_t kMaxFrame = 16u << 20;
// The host's exit status after it recorded a fault in the status page.
inline constexpr int kFaultExit = 86;

struct Hello {
  uint32_t magic;
  uint32_t refused;  // 1: the rest of the frame is the reason, as text
  uint32_t count;    // ListedKernel entries that follow
  FpControl before;  // the control state before the library was loaded
  FpControl after;   // ... and after it was loaded and listed its kernels
};

// One kernel as the library listed it (library.h: ListedEntry), followed by
// name_bytes of its name, spec_bytes of its spec (version 2) and domain_bytes
// of its declared domain's text.
struct ListedKernel {
  int32_t op, dtype;
  uint32_t extension;   // 1: from normcheck_plugin_kernels_ext (the dtype and NC_RMSNORM_BWD are its)
  uint32_t v2;          // 1: from normcheck_plugin_kernels_v2
  uint32_t has_fn;      // 0: a null function
  uint32_t has_name;    // 0: a null name
  uint32_t has_spec, has_domain;
  uint32_t name_bytes, spec_bytes, domain_bytes;
};

// The arrays of one call: each run's own (normcheck/call_buffers.h has at
// most 13 for one call), for up to two runs.
inline constexpr int kMaxBuffers = 32;
inline constexpr int kNameBytes = 16;

// One array of the call (normcheck/call_buffers.h names them). Its bytes lie
// at [offset, offset + bytes) of the arena, ending flush against the page at
// `guard`, which the host makes inaccessible (and keeps so while no array of
// a later batch lies on it: normcheck reuses a layout's places).
// [start, offset) is the canary zone normcheck checks; the host keeps
// [start, guard) accessible.
struct BufferDesc {
  char name[kNameBytes];
  uint64_t start, offset, bytes, guard;
  uint32_t output;
  uint32_t reserved;
};

// One call runs the kernel `runs` times (1 or 2), run r on its own copy of
// the arrays, buffer[r * buffers, (r + 1) * buffers): normcheck compares the
// two runs' outputs bit for bit (a case runs twice, fuzz/isolation.h).
struct CallRequest {
  uint32_t kernel;  // its index in the Hello's list
  uint32_t runs;
  uint32_t buffers;  // per run
  float eps;
  int64_t rows, cols, out_features, row_stride;
  BufferDesc buffer[kMaxBuffers];
};

// The calls of one round trip, at kRequestOffset of the arena; their
// replies follow at reply_offset(). A campaign's batch is 64 cases, each at
// one call at a time (fuzz/call_batch.h).
inline constexpr uint32_t kMaxCalls = 64;
struct BatchRequest {
  uint32_t magic;
  uint32_t calls;
  uint64_t arena_bytes;  // the arena's size now (it grows between batches)
  CallRequest call[kMaxCalls];
};

struct CallReply {
  uint32_t magic;
  uint32_t fp_changed;  // 1: a run left the control state changed (the host restored it)
  FpControl during;     // the state the first such run left
};

inline constexpr uint64_t kRequestOffset = 4096;  // page 0 is the status page
inline constexpr uint64_t kReplyOffset = kRequestOffset + sizeof(BatchRequest);
// Where the arrays may start: past the replies, rounded up to a page.
inline uint64_t arrays_offset(uint64_t page) {
  return (kReplyOffset + kMaxCalls * sizeof(CallReply) + page - 1) / page * page;
}

enum Phase : int32_t { kLoading = 1, kIdle = 2, kInCall = 3 };

// Page 0 of the arena: the batch in flight and, after a fault, where it came.
// A batch: normcheck writes the BatchRequest, sets calls_done and
// runs_started to 0, then sets request_seq to a new number; the host copies
// the request, runs its calls in order (before each run it adds one to
// runs_started; after each call it writes the call's reply and adds one to
// calls_done), then sets reply_seq to the same number. Each side watches
// the other's number for a while (Watch, below), then sleeps on it in
// FUTEX_WAIT; each wakes the other with FUTEX_WAKE when it sleeps. The host's
// fault handler fills the fault fields and sets reply_seq to kFaulted before
// the host exits: the call that faulted is calls_done's (phase kInCall), or
// the host was between calls (kIdle), after calls_done calls had returned.
struct StatusPage {
  std::atomic<int32_t> phase;
  std::atomic<int32_t> fault_signal;    // 0: none
  std::atomic<int32_t> fault_phase;     // the phase when it came
  std::atomic<int32_t> fault_in_guard;  // 1 + the index of the call's array whose guard page the address lay in; 0: none
  std::atomic<int32_t> fault_on_stack;  // ... just below the lowest address the main stack may use
  std::atomic<uint64_t> fault_address;
  std::atomic<uint32_t> request_seq, reply_seq;
  // 1 while that side sleeps (or is about to) in FUTEX_WAIT on the other's
  // number: the other side calls FUTEX_WAKE only then. A side sets its flag,
  // then looks at the number once more before sleeping, and the other stores
  // the number before it reads the flag (all sequentially consistent), so a
  // wake-up is never missed.
  std::atomic<uint32_t> host_sleeps, normcheck_sleeps;
  // Of the batch in flight: the runs started (the watchdog times each run)
  // and the calls whose reply is written.
  std::atomic<uint32_t> runs_started, calls_done;
};
static_assert(sizeof(StatusPage) <= kRequestOffset, "the status page is one page");

inline constexpr uint32_t kFaulted = 0xffffffffu;

// FUTEX_WAIT (up to timeout_ms; -1: no limit) while `word` holds `expected`,
// and FUTEX_WAKE of every waiter: shared, not private, futexes, since the
// word lies in memory two processes map.
inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, int timeout_ms) {
  timespec t{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, timeout_ms < 0 ? nullptr : &t,
          nullptr, 0);
}
// Watching a word before sleeping on it. The other side usually answers
// within tens of microseconds (a small case's evaluation, a small kernel's
// two runs), about what a futex sleep and wake-up costs on a virtual
// machine; so each side first watches the word, for as long as watching has
// paid: the budget is twice the last wait that ended while watching or soon
// after (at most kMaxUs), and a watch that runs out quarters it. On a
// machine with no spare core, where the other side may not run while this
// one watches, the budget soon falls below kMinUs and the side only sleeps.
class Watch {
 public:
  static constexpr int64_t kMaxUs = 100, kMinUs = 4;

  // Watches until `word` no longer holds `expected` (true) or the budget ends.
  bool watch(std::atomic<uint32_t>& word, uint32_t expected) {
    start_ = now_us();
    if (budget_us_ < kMinUs) return word.load() != expected;
    for (int i = 1;; ++i) {
      if (word.load() != expected) {
        budget_us_ = std::min(kMaxUs, std::max(kMinUs, 2 * (now_us() - start_)));
        return true;
      }
      __builtin_ia32_pause();
      if (i % 32 == 0 && now_us() - start_ > budget_us_) break;
    }
    budget_us_ /= 4;
    return false;
  }
  // After sleeping: a wait short enough to have been watched is watched next time.
  void slept() {
    if (const int64_t waited = now_us() - start_; waited < kMaxUs / 2) budget_us_ = std::max(kMinUs, 2 * waited);
  }

 private:
  static int64_t now_us() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t{t.tv_sec} * 1000000 + t.tv_nsec / 1000;
  }
  int64_t budget_us_ = kMaxUs;
  int64_t start_ = 0;
};

inline void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free);

}  // namespace normcheck::host
