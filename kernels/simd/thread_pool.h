// The process-wide pool of worker threads the SIMD kernels share.
//
// Created once (on first use) and kept: a kernel call hands it a number of
// tasks, the caller and the workers take tasks from a shared counter, and the
// call returns when every task has run. Which thread runs which task varies;
// kernels keep their results independent of that by fixing, from the problem
// shape alone, what each task computes and the order partial results merge in.
// So a kernel gives bit-identical results for every thread count.
#pragma once

#include <algorithm>
#include <cstdint>

namespace normcheck::simd {

// Threads that take part in a parallel_for (the caller counts as one).
// Default: NORMCHECK_THREADS if set to a positive integer, else the number of
// hardware threads.
int thread_count();

// Changes the thread count (1 runs everything on the caller). Waits for a
// running parallel_for to finish; workers are started or stopped only here.
// In a child forked after the pool started (the fuzz driver's isolation), the
// workers are not there: the count is 1 and this does nothing.
void set_thread_count(int threads);

// Kernel calls on fewer elements (rows x cols) than this run on the caller
// alone (row_driver.h: run_serially). Default kMinParallelElements
// (row_partition.h, where the measurement behind it is described); setting it
// is for measuring that threshold (bench/parallel_threshold.cpp), since the
// results do not depend on it (the partition is fixed by the shape).
int64_t min_parallel_elements();
void set_min_parallel_elements(int64_t elements);

// Checking a kernel's outputs (the exact reference's fast phase, the verdict's
// tally) costs far more per element than a kernel: the forward reference
// alone about 27 ns (9,200 rows of 4096 a CPU second, issue 42), so from
// 2^14 elements (about 0.4 ms of work) spreading it over the pool pays for
// waking the workers (tens of microseconds), while a campaign's small cases
// (a few rows of tens of elements) stay on the caller. The results do not
// depend on it.
inline constexpr int64_t kParallelCheckElements = int64_t{1} << 14;

// How a check's pass over `rows` rows of `row_elements` elements each is cut
// into contiguous chunks of rows for the pool: one chunk (the caller alone)
// below kParallelCheckElements elements, else up to four per thread (so that a
// slow thread leaves work to the others). Chunk c of `chunks` holds rows
// [rows c / chunks, rows (c + 1) / chunks), in order: results merged chunk by
// chunk are merged in row order.
inline int64_t check_chunks(int64_t rows, int64_t row_elements) {
  return rows * row_elements < kParallelCheckElements ? 1 : std::min<int64_t>(rows, 4 * thread_count());
}
inline int64_t chunk_first_row(int64_t rows, int64_t chunks, int64_t c) { return rows * c / chunks; }

// Runs task(context, i) for i in [0, tasks). Runs serially on the caller when
// there is one task, one thread, or the pool is busy with another caller (a
// kernel called from several threads at once, or from inside a task).
void parallel_for(int64_t tasks, void (*task)(void* context, int64_t i), void* context);

// The same for any callable: f(i).
template <class F>
void parallel_for(int64_t tasks, const F& f) {
  parallel_for(
      tasks, [](void* context, int64_t i) { (*static_cast<const F*>(context))(i); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace normcheck::simd
