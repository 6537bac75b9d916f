// What normcheck and a kernel host (main.cpp) say to each other.
//
// The host is started by exec with three descriptors: kChannelFd, a stream
// socket carrying framed messages (a uint32 length, then the bytes), and
// kArenaFd, a memfd of shared memory holding the status page (page 0) and
// the call's arrays. Its stdout and stderr are a pipe normcheck reads and
// shows as the plugin's output.
//
//   host -> normcheck  Hello (+ ListedKernel entries, or the reason it refused)
//   normcheck -> host  CallRequest     host -> normcheck  CallReply
//   ... until normcheck closes the channel or ends the host's process group.
//
// Everything the host sends or writes can also have been written by the
// plugin it loaded: normcheck checks each field's range and treats a message
// it cannot parse as the host's failure, never as data.
#pragma once

#include <atomic>
#include <cstdint>

#include "fp_control.h"

namespace normcheck::host {

inline constexpr int kChannelFd = 3;
inline constexpr int kArenaFd = 4;
inline constexpr uint32_t kMagic = 0x6e63686fu;  // "ncho"
inline constexpr uint32_t kMaxFrame = 16u << 20;
// The host's exit status after it recorded a fault in the status page.
inline constexpr int kFaultExit = 86;

enum Phase : int32_t { kLoading = 1, kIdle = 2, kInCall = 3 };

// Page 0 of the arena. The host's fault handler fills it before the host
// exits, so normcheck can tell which phase a signal came in and where.
struct StatusPage {
  std::atomic<int32_t> phase;
  std::atomic<int32_t> fault_signal;    // 0: none
  std::atomic<int32_t> fault_phase;     // the phase when it came
  std::atomic<int32_t> fault_in_guard;  // 1 + the index of the array whose guard page the address lay in; 0: none
  std::atomic<int32_t> fault_on_stack;  // ... just below the lowest address the main stack may use
  std::atomic<uint64_t> fault_address;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free);

struct Hello {
  uint32_t magic;
  uint32_t refused;  // 1: the rest of the frame is the reason, as text
  uint32_t count;    // ListedKernel entries that follow
  FpControl before;  // the control state before the library was loaded
  FpControl after;   // ... and after it was loaded and listed its kernels
};

// One kernel as the library listed it, followed by name_bytes of its name.
struct ListedKernel {
  int32_t op, dtype;
  uint32_t extension;   // 1: from normcheck_plugin_kernels_ext (the dtype and NC_RMSNORM_BWD are its)
  uint32_t has_fn;      // 0: a null function
  uint32_t has_name;    // 0: a null name
  uint32_t name_bytes;
};

inline constexpr int kMaxBuffers = 16;
inline constexpr int kNameBytes = 16;

// One array of the call (normcheck/call_buffers.h names them). Its bytes lie
// at [offset, offset + bytes) of the arena, ending flush against the page at
// `guard`, which the host makes inaccessible for the call.
struct BufferDesc {
  char name[kNameBytes];
  uint64_t offset, bytes, guard;
  uint32_t output;
  uint32_t reserved;
};

struct CallRequest {
  uint32_t magic;
  uint32_t kernel;  // its index in the Hello's list
  int64_t rows, cols, out_features;
  float eps;
  uint32_t buffers;
  uint64_t arena_bytes;  // the arena's size now (it grows between calls)
  BufferDesc buffer[kMaxBuffers];
};

struct CallReply {
  uint32_t magic;
  uint32_t fp_changed;  // 1: the call left the control state changed (the host restored it)
  FpControl during;     // the state the call left
};

}  // namespace normcheck::host
