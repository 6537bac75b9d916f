#include "normcheck/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace normcheck {

void advise_huge_pages(void* data, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t lo = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t hi = (begin + bytes) & ~(kHuge - 1);
  // EINVAL where the kernel has no THP: the pages stay 4 KiB, which is correct too.
  if (data && hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

namespace {

// The thresholds set in the environment (glibc's tunables or its older
// variables): the process chose its own policy.
bool thresholds_set_by_environment() {
  if (const char* t = std::getenv("GLIBC_TUNABLES"); t && std::strstr(t, "glibc.malloc.")) return true;
  for (const char* v : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

void retain_freed_memory() {
#if defined(__GLIBC__)
  static const bool done = [] {
    if (thresholds_set_by_environment()) return false;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)done;
#endif
}

}  // namespace normcheck
