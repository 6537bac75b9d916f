// Which bench shapes are out of cache: the last-level cache's size as Linux
// reports it, and the criterion the report's speed figure uses.
#pragma once

#include <cstddef>
#include <filesystem>

#include "normcheck/kernel.h"
#include "workload.h"

namespace normcheck::bench {

// The size in bytes of the largest cache of CPU 0 that holds data (the
// last-level cache), from `cache_dir` (Linux: /sys/devices/system/cpu/cpu0/cache,
// one indexN folder per cache with `type` and `size` such as "32768K"); 0 when
// no such cache is listed. sysfs, not sysconf(_SC_LEVEL3_CACHE_SIZE): glibc's
// figure can be a multiple of the cache a core sees (384 MiB for a 32 MiB L3 on
// the VM this was written on).
std::size_t last_level_cache_bytes(const std::filesystem::path& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// Out of cache: the bytes one call moves (bytes_moved) are at least twice the
// last-level cache, so that at most half of them can still be cached when the
// next call starts, whatever the replacement policy (an adaptive one can keep
// part of a working set only a little larger than the cache). False when the
// cache's size is not known (0).
inline constexpr double kOutOfCacheFactor = 2;
bool out_of_cache(const Kernel& kernel, BenchShape shape, std::size_t cache_bytes);

}  // namespace normcheck::bench
