// Large arrays and the cost of their first touch. A page of fresh anonymous
// memory costs a fault on its first write, and on a virtual machine a fault
// costs microseconds: the 12 GB a 65536 x 4096 backward judgement touches
// spend most of their time in faults of 4 KiB pages (docs/performance.md).
// Transparent huge pages cut the faults 512-fold where the kernel backs a
// range with 2 MiB pages; with THP in "madvise" mode (Debian's default) it
// does so only for ranges advised MADV_HUGEPAGE before their first touch.
#pragma once

#include <cstddef>
#include <vector>

namespace normcheck {

// Advises the whole 2 MiB pages inside [data, data + bytes) as huge-page
// candidates. Below 2 MiB, or where the system has no THP, nothing happens:
// the advice changes no value, only the size of the pages behind them.
void advise_huge_pages(void* data, std::size_t bytes);

// Keeps a judgement's freed arrays in the process for the next one. glibc's
// malloc serves a block above M_MMAP_THRESHOLD by a mapping of its own,
// unmapped when freed, and gives the top of its heap back to the system when
// more than M_TRIM_THRESHOLD of it is free; its dynamic thresholds follow the
// largest block freed so far, and a judgement frees tens of arrays of rows x
// cols values at once, so every call faulted its pages in afresh (at 64 x 4096
// the faults and the zeroing of fresh pages were 60% of evaluate()'s time,
// docs/performance.md). Sets M_MMAP_THRESHOLD to 32 MiB (the ceiling of
// glibc's own dynamic threshold) and M_TRIM_THRESHOLD to 512 MiB, once per
// process: up to 512 MiB of freed heap stays mapped, blocks above 32 MiB
// are still mappings of their own. The process's own setting wins: nothing
// is changed when glibc's malloc tunables are set in the environment
// (GLIBC_TUNABLES naming glibc.malloc, or a MALLOC_*_ variable), nor
// without glibc. evaluate() calls it.
void retain_freed_memory();

// n value-initialized elements whose storage was advised before the first
// write (std::vector<T>(n) writes its zeros before any advice could be given).
template <class T>
std::vector<T> large_vector(std::size_t n) {
  std::vector<T> v;
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
  v.resize(n);
  return v;
}

}  // namespace normcheck
