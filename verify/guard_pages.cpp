#include "normcheck/guard_pages.h"
#include "normcheck/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace normcheck {
namespace {

// Every live block's two guard ranges. evaluate() holds at most a dozen
// arrays at once; 256 entries leave room for any caller, and a block that finds
// no free entry still faults on its guards (it is only not recognised as one).
constexpr int kSlots = 256;
struct GuardRange {
  std::atomic<std::uintptr_t> lo{0}, hi{0};  // the whole mapping: [lo, hi)
  std::atomic<std::uintptr_t> usable_lo{0}, usable_hi{0};
  std::atomic<bool> used{false};
};
GuardRange g_ranges[kSlots];

}  // namespace

PageGuardedBlock::PageGuardedBlock(std::size_t bytes) {
  page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  usable_bytes_ = bytes == 0 ? page_ : (bytes + page_ - 1) / page_ * page_;
  mapping_bytes_ = usable_bytes_ + 2 * page_;
  void* m = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::runtime_error("PageGuardedBlock: mmap failed");
  mapping_ = static_cast<unsigned char*>(m);
  usable_ = mapping_ + page_;
  if (mprotect(mapping_, page_, PROT_NONE) != 0 || mprotect(usable_ + usable_bytes_, page_, PROT_NONE) != 0) {
    munmap(mapping_, mapping_bytes_);
    throw std::runtime_error("PageGuardedBlock: mprotect failed");
  }
  advise_huge_pages(usable_, usable_bytes_);  // before the caller's first write
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_ranges[i].used.compare_exchange_strong(expected, true)) {
      g_ranges[i].lo = reinterpret_cast<std::uintptr_t>(mapping_);
      g_ranges[i].hi = reinterpret_cast<std::uintptr_t>(mapping_ + mapping_bytes_);
      g_ranges[i].usable_lo = reinterpret_cast<std::uintptr_t>(usable_);
      g_ranges[i].usable_hi = reinterpret_cast<std::uintptr_t>(usable_ + usable_bytes_);
      slot_ = i;
      break;
    }
  }
}

PageGuardedBlock::~PageGuardedBlock() {
  if (slot_ >= 0) {
    g_ranges[slot_].lo = 0;
    g_ranges[slot_].hi = 0;
    g_ranges[slot_].used = false;
  }
  munmap(mapping_, mapping_bytes_);
}

bool address_in_guard_page(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (const GuardRange& r : g_ranges) {
    if (!r.used.load()) continue;
    if (a >= r.lo.load() && a < r.hi.load() && !(a >= r.usable_lo.load() && a < r.usable_hi.load()))
      return true;
  }
  return false;
}

}  // namespace normcheck
