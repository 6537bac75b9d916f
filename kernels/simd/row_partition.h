// How the SIMD kernels cut work, fixed by the problem's shape alone (never by
// the thread count), and the summation depth that cut implies for the bounds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace normcheck::simd {

// A row is summed in chunks of this many elements; the chunk sums are added
// left to right. Short chunks keep the summation depth (hence the bounds)
// small: about kChunk/4 + d/kChunk instead of d/4 on a one-lane target.
// Threads split a long row at chunk boundaries, so one row gives the same bits
// whether one thread or several work on it.
inline constexpr int64_t kChunk = 1024;

// Rows at least this long are split over the pool when there are fewer rows
// than threads (shorter ones cost less than waking the workers).
inline constexpr int64_t kSplitMinCols = 32768;

// Calls on fewer elements (rows x cols) than this run on the caller alone:
// below it, handing work to the pool costs more than it saves. Measured with
// bench/parallel_threshold.cpp (1 thread against 2, alternating in one
// process, 5 to 7 rounds, 1x768 to 2048x768, 8x4096 to 512x4096, 1 to 16 rows
// of 65536; docs/performance.md has the figures) on this 2-core machine with
// nothing else running (load average about 1). Its rule (2 threads faster on
// every larger shape of the grid) gives the LayerNorm forward 1.5 * 2^20
// (2048x768) in two of three runs (256x4096 at 1.17 of the 1-thread time,
// 2048x768 at 0.94) and 1.5 * 2^18 in the third, the other forwards 1.5 * 2^17
// to 1.5 * 2^18 and the backwards 1.5 * 2^17 to 1.5 * 2^19 (a block of long
// rows goes to the pool by chunks, so 16 rows of 65536 take 0.50 to 0.90 of
// the 1-thread time). The LayerNorm forward sets the value. Every small batch
// (64x768 is 49152) stays on one thread, every standard bench shape from
// 4096x1024 (2^22) up goes to the pool. Results do not depend on it (the
// partition is fixed by the shape); thread_pool.h's set_min_parallel_elements
// changes it for measuring.
inline constexpr int64_t kMinParallelElements = 3 * (int64_t{1} << 19);

// The backward sums dgamma/dbeta over blocks of this many rows (one partial
// row per block), then adds the block partials in block order.
inline constexpr int64_t kBwdRowsPerBlock = 32;

// Outputs of at least this many bytes are written with non-temporal stores:
// they would not stay in a last-level cache anyway (32 MiB here), and
// skipping the cache saves reading each output line before writing it.
inline constexpr int64_t kStreamOutputBytes = int64_t{32} << 20;

// Whether a call writing rows x cols elements of `element_bytes` each streams
// its output (kStreamOutputBytes): decided once per call, from the shape, so
// that every row of the call stores the same way.
inline constexpr bool streams_output(int64_t rows, int64_t cols, int64_t element_bytes) {
  return rows * cols * element_bytes >= kStreamOutputBytes;
}

inline constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How many elements chunk ch of a row of cols elements holds (the last one
// may be short).
inline constexpr size_t chunk_length(int64_t cols, int64_t ch) {
  return static_cast<size_t>(std::min(kChunk, cols - ch * kChunk));
}

// Where chunk ch starts in the row operand p; null stays null (gamma, beta,
// the statistics and the partial rows are optional).
template <typename T>
constexpr T* chunk_start(T* p, int64_t ch) {
  return p ? p + ch * kChunk : nullptr;
}

// The most roundings any one element meets in our lane-parallel sum of n
// elements (kernels/simd/*-inl.h: `lanes` lanes times 4 accumulators, the
// accumulators added pairwise, then the lanes by a pairwise tree), for every
// target with at least `min_lanes` lanes of the summed type:
//   accumulator 0 takes floor(n / 4L) full rounds, up to 3 more whole vectors
//   and the zero-padded tail: n/(4L) + 4 additions; 2 for the accumulators;
//   log2(L) <= log2(16) = 4 for the lanes. With L >= min_lanes:
//   depth(n) <= ceil(n / (4 min_lanes)) + 10.
// The same holds for 2 accumulators of L >= 2 lanes (the LayerNorm
// backward's groups of 4 rows, BwdAccumulators): n/(2L) + 2 additions, 1 for
// the accumulators, and 2 L >= 4 min_lanes while min_lanes is 1.
// Chunks of kChunk add ceil(n / kChunk) more: their sums (scalars, or lane
// vectors added before the lane tree) are added left to right.
inline constexpr int64_t summation_depth(int64_t n, int64_t min_lanes) {
  const int64_t within = n < kChunk ? n : kChunk;
  return ceil_div(within, 4 * min_lanes) + 10 + ceil_div(n, kChunk);
}

// The fewest lanes of any target the kernels are built for: HWY_SCALAR (the
// fallback for x86-64 CPUs without SSSE3) has one lane of any type.
inline constexpr int64_t kMinLanes = 1;

}  // namespace normcheck::simd
