// Memory between two inaccessible pages, for running kernels that may read or
// write past their arrays (plugins, in a child process: fuzz/isolation.h).
//
// A PageGuardedBlock maps [guard page][usable pages][guard page] and makes the
// two guard pages PROT_NONE, so any access to them faults (SIGSEGV). Each live
// block's guard pages are recorded in a fixed table that a signal handler may
// read (address_in_guard_page is async-signal-safe), which is how a fault is
// told apart as an out-of-bounds access rather than any other crash.
#pragma once

#include <cstddef>

namespace normcheck {

// The zone before (and, without a guard page, after) each array a kernel is
// given, filled with this byte: a write there changes it. evaluate()'s arrays
// and a plugin's in the kernel host's shared memory (fuzz/kernel_host.h) have
// the same zones.
inline constexpr std::size_t kCanaryZoneBytes = 64;
inline constexpr unsigned char kCanaryByte = 0xc5;

class PageGuardedBlock {
 public:
  // At least `bytes` usable bytes (rounded up to whole pages; 0 gives one page).
  // Throws std::runtime_error when the mapping fails.
  explicit PageGuardedBlock(std::size_t bytes);
  ~PageGuardedBlock();
  PageGuardedBlock(const PageGuardedBlock&) = delete;
  PageGuardedBlock& operator=(const PageGuardedBlock&) = delete;

  unsigned char* begin() const { return usable_; }
  unsigned char* end() const { return usable_ + usable_bytes_; }

 private:
  unsigned char* mapping_ = nullptr;
  unsigned char* usable_ = nullptr;
  std::size_t usable_bytes_ = 0, mapping_bytes_ = 0, page_ = 0;
  int slot_ = -1;  // this block's entry in the guard-page table, -1 if none was free
};

// True when `address` lies in a guard page of a live PageGuardedBlock.
// Async-signal-safe (reads a fixed table of atomics).
bool address_in_guard_page(const void* address);

}  // namespace normcheck
