// Scoped settings of the SIMD kernels' thread pool for tests: the thread
// count, and the cut-off below which calls stay on the caller.
#pragma once

#include <cstdint>

#include "simd/thread_pool.h"

namespace normcheck::test {

// Restores the default thread count when a test ends.
struct ThreadCountGuard {
  int saved = simd::thread_count();
  ~ThreadCountGuard() { simd::set_thread_count(saved); }
};

// Sends every call with more than one thread through the pool (the default
// cut-off keeps small calls on the caller, and test shapes are small),
// restoring the cut-off when the test ends.
struct EveryCallParallel {
  int64_t saved = simd::min_parallel_elements();
  EveryCallParallel() { simd::set_min_parallel_elements(0); }
  ~EveryCallParallel() { simd::set_min_parallel_elements(saved); }
};

}  // namespace normcheck::test
