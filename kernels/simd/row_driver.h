// How the SIMD kernels spread rows over the pool: many rows go to threads in
// blocks of whole rows; a few long rows are each split at chunk boundaries.
// Either way each row is computed by the same chunked algorithm, so results
// do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "row_partition.h"
#include "thread_pool.h"

namespace normcheck::simd {

// Whether a rows x cols call runs on the caller alone: one thread, or less
// work than a hand-off to the pool costs (min_parallel_elements()).
inline bool run_serially(int64_t rows, int64_t cols) {
  return thread_count() == 1 || rows * cols < min_parallel_elements();
}

// row.template operator()<kSplit>(r) computes row r: serially with kSplit
// false, with its chunks spread over the pool with kSplit true (bit-identical).
template <class RowFn>
void for_each_row(int64_t rows, int64_t cols, const RowFn& row) {
  if (run_serially(rows, cols)) {
    for (int64_t r = 0; r < rows; ++r) row.template operator()<false>(r);
    return;
  }
  const int64_t threads = thread_count();
  if (rows < threads && cols >= kSplitMinCols) {
    for (int64_t r = 0; r < rows; ++r) row.template operator()<true>(r);
    return;
  }
  // Several blocks per thread balance rows of unequal cost (fallback rows).
  const int64_t blocks = std::min(rows, 8 * threads);
  parallel_for(blocks, [&](int64_t b) {
    const int64_t begin = rows * b / blocks, end = rows * (b + 1) / blocks;
    for (int64_t r = begin; r < end; ++r) row.template operator()<false>(r);
  });
}

// The rows a row computation may prefetch: the next one and the one after
// it (null where there is none, and for split rows, whose chunks run on
// several threads).
template <typename T>
struct RowsAhead {
  const T* next = nullptr;
  const T* after_next = nullptr;
};

// The RowsAhead of row r of the rows x cols array at base.
template <bool kSplit, typename T>
RowsAhead<T> rows_ahead(const T* base, int64_t r, int64_t rows, int64_t cols) {
  RowsAhead<T> ahead;
  if (!kSplit && r + 1 < rows) ahead.next = base + (r + 1) * cols;
  if (!kSplit && r + 2 < rows) ahead.after_next = base + (r + 2) * cols;
  return ahead;
}

// The LayerNorm forward kernels' row loop, for every row algorithm (FastRow,
// AccurateRow) and storage type T: calls
//   row_fn.template operator()<kSplit>(x_row, gamma, beta, y_row, mean_slot,
//                                      rstd_slot, cols, eps, stream, ahead)
// where mean_slot/rstd_slot are null when mean/rstd are, `stream` asks for
// non-temporal stores (outputs too large to stay cached), and `ahead`
// (RowsAhead) points at the rows computed next, to prefetch.
template <typename T, class RowFn>
void for_each_layernorm_fwd_row(const RowFn& row_fn, const T* x, const float* gamma,
                                const float* beta, T* y, float* mean, float* rstd, int64_t rows,
                                int64_t cols, float eps) {
  const bool stream = streams_output(rows, cols, sizeof(T));
  for_each_row(rows, cols, [&]<bool kSplit>(int64_t r) {
    row_fn.template operator()<kSplit>(x + r * cols, gamma, beta, y + r * cols,
                                       mean ? mean + r : nullptr, rstd ? rstd + r : nullptr, cols,
                                       eps, stream, rows_ahead<kSplit>(x, r, rows, cols));
  });
}

// Computes compute(i) for the chunks i of one row and hands the results to
// merge(result) in chunk order. kSplit spreads the computing over the pool;
// the merge order, hence the result, is the same either way.
template <bool kSplit, class Compute, class Merge>
void fold_chunks(int64_t chunks, const Compute& compute, const Merge& merge) {
  if constexpr (kSplit) {
    std::vector<decltype(compute(int64_t{0}))> parts(chunks);
    parallel_for(chunks, [&](int64_t i) { parts[i] = compute(i); });
    for (const auto& part : parts) merge(part);
  } else {
    for (int64_t i = 0; i < chunks; ++i) merge(compute(i));
  }
}

// Runs work(i) for every chunk i of one row, over the pool when kSplit.
template <bool kSplit, class Work>
void for_each_chunk(int64_t chunks, const Work& work) {
  if constexpr (kSplit) {
    parallel_for(chunks, work);
  } else {
    for (int64_t i = 0; i < chunks; ++i) work(i);
  }
}

}  // namespace normcheck::simd
