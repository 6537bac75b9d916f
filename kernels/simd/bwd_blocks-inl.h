// How the backward kernels spread rows over the pool while keeping dgamma and
// dbeta bit-identical for every thread count: rows go in fixed blocks of
// kBwdRowsPerBlock, each block adds its rows' terms into its own partial row,
// and the partials are added in block order (columns in parallel). A problem
// of one block writes its sums straight into dgamma/dbeta, splitting long
// rows into chunks (each chunk owns its columns of the partial row).
#if defined(NORMCHECK_SIMD_BWD_BLOCKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_BWD_BLOCKS_INL_H_
#undef NORMCHECK_SIMD_BWD_BLOCKS_INL_H_
#else
#define NORMCHECK_SIMD_BWD_BLOCKS_INL_H_
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// The backward's rows, and whether dx is large enough to be written around
// the cache (streams_output, as the forward kernels decide it).
template <typename T>
struct BwdRows {
  const T* dy;
  const T* x;
  T* dx;
  int64_t rows, cols;
  bool stream() const { return streams_output(rows, cols, sizeof(T)); }
};

// Rows a backward kernel computes together in pass 1 (kRowsTogether of
// BwdRowBlockOf, at most kBwdMaxRowsTogether; each kernel says why its
// choice): each partial-row vector is loaded once, takes the rows' terms in
// row order while it stays in a register, and is stored once, so the sums
// are those of one row at a time, in the same order, with 1/k of the loads
// and stores of the partial rows. A block's last rows go in smaller groups
// (BwdGroupSize).
inline constexpr int64_t kBwdMaxRowsTogether = 4;

// The rows of the group starting `left` rows before the end of its block:
// the largest power of 2 up to kRowsTogether and `left`.
template <int64_t kRowsTogether>
HWY_INLINE int64_t BwdGroupSize(int64_t left) {
  static_assert(kRowsTogether == 1 || kRowsTogether == 2 || kRowsTogether == 4);
  static_assert(kRowsTogether <= kBwdMaxRowsTogether);
  return static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(std::min(kRowsTogether, left))));
}

// Calls f.template operator()<K>() with K == k, a group's size
// (BwdGroupSize<kRowsTogether>).
template <int64_t kRowsTogether, class F>
HWY_INLINE void WithGroupSize(int64_t k, const F& f) {
  if constexpr (kRowsTogether >= 4) {
    if (k == 4) return f.template operator()<4>();
  }
  if constexpr (kRowsTogether >= 2) {
    if (k == 2) return f.template operator()<2>();
  }
  f.template operator()<1>();
}

// The accumulators of each of a row's sums in pass 1, for a target whose
// groups hold up to `rows_together` rows of `sums` sums each: 4, or 2 where
// rows_together x sums x 4 would take more than 16 vector registers (the
// LayerNorm backward's 4 rows of 2 sums on AVX-512), leaving the other 16 to
// the loads, terms and partial rows. It depends on the target alone, never
// on how many rows a group has: a row summed alone or in a short group at
// the end of a block (whose length follows the rows and the thread count)
// gets the same accumulators, hence the same bits, as in a full group.
// summation_depth covers both: it assumes 4 accumulators of one lane, and 2
// of at least 2 lanes (BwdSumsChunk asserts it) take no more roundings.
inline constexpr size_t BwdAccumulators(int rows_together, int sums) {
  return rows_together * sums * 4 <= 16 ? 4 : 2;
}

// Calls f(std::integral_constant<size_t, j>()) for j = 0 .. K - 1 in order:
// loops over a group's rows and a sum's accumulators with constant indices,
// so that their vectors stay in registers.
template <size_t K, class F>
HWY_INLINE void ForEachIndex(const F& f) {
  [&]<size_t... J>(std::index_sequence<J...>) NORMCHECK_INLINE_LAMBDA {
    (f(std::integral_constant<size_t, J>()), ...);
  }(std::make_index_sequence<K>());
}

// The U accumulators of a sum added pairwise: ((0 + 1) + (2 + 3)) for 4.
template <class V, size_t U>
HWY_INLINE V AddAccumulators(const V (&acc)[U]) {
  static_assert(U == 2 || U == 4);
  if constexpr (U == 4) return hn::Add(hn::Add(acc[0], acc[1]), hn::Add(acc[2], acc[3]));
  return hn::Add(acc[0], acc[1]);
}

// How far ahead the passes prefetch, in row groups: the rows of the group
// after next (with 4096 float columns and pairs, 4 rows of x and dy = 128
// KiB; 8 rows for groups of 4, measured with them). One
// or four groups ahead took 0.95 to 1.07 of the time on 4096x4096 and
// 256x65536, within what normcheck_compare_builds resolves; no prefetch took
// 1.08 to 1.34 on 4096x4096 (docs/performance.md, "Comparing two builds"). They
// prefetch into L2 (PrefetchToL2): pass 1 reads the rows once and pass 2
// re-reads them from L2; prefetcht0 and prefetchnta measured slower on
// 4096x4096 (docs/performance.md).
inline constexpr int64_t kBwdGroupsAhead = 2;

// Where the row `ahead` rows after r starts, or row r itself when there is
// none (prefetching that costs nothing: it is being read).
template <typename T>
HWY_INLINE const T* BwdAhead(const T* base, int64_t r, int64_t ahead, int64_t rows,
                             int64_t cols) {
  return base + (r + ahead < rows ? r + ahead : r) * cols;
}

// The rows r .. r + k - 1 of a row group (k <= kBwdMaxRowsTogether): where each
// starts in dy and x, and the rows kBwdGroupsAhead groups after each, which
// the passes prefetch (BwdAhead).
template <typename T>
struct BwdGroup {
  const T* dy[kBwdMaxRowsTogether];
  const T* x[kBwdMaxRowsTogether];
  const T* next_dy[kBwdMaxRowsTogether];
  const T* next_x[kBwdMaxRowsTogether];
  int64_t r, k;  // the first row, the rows

  BwdGroup(const BwdRows<T>& rows, int64_t first_row, int64_t rows_in_group)
      : r(first_row), k(rows_in_group) {
    for (int64_t j = 0; j < k; ++j) {
      dy[j] = rows.dy + (r + j) * rows.cols;
      x[j] = rows.x + (r + j) * rows.cols;
      next_dy[j] = BwdAhead(rows.dy, r + j, k * kBwdGroupsAhead, rows.rows, rows.cols);
      next_x[j] = BwdAhead(rows.x, r + j, k * kBwdGroupsAhead, rows.rows, rows.cols);
    }
  }

  // Pass 1's operands in chunk ch: each row's dy and x, and the x it prefetches.
  struct Chunk {
    const T* dy[kBwdMaxRowsTogether];
    const T* x[kBwdMaxRowsTogether];
    const T* next_x[kBwdMaxRowsTogether];
  };
  Chunk chunk(int64_t ch) const {
    Chunk c{};
    for (int64_t j = 0; j < k; ++j) {
      c.dy[j] = chunk_start(dy[j], ch);
      c.x[j] = chunk_start(x[j], ch);
      c.next_x[j] = chunk_start(next_x[j], ch);
    }
    return c;
  }
};

// The dx of a row whose sums are not finite (NaN or inf in its dy, x, gamma
// or saved statistics): all NaN, so that the dx pass only ever sees rows
// whose every term is finite (Values::no_input_nan there).
template <typename T>
void FillNaN(T* p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  size_t i = 0;
  for (; i + N <= n; i += N) StoreFromFloat(d, nan, p + i);
  if (i < n) StoreFromFloatTail(d, nan, p + i, n - i);
}

// Writes n elements of a row's dx, dx_of(dy, x, gamma) of float vectors of d
// (gamma zero when kGamma is false), reading dy, x and gamma in pairs
// (WriteRowPairs). The caller's row has finite sums, so only an invalid
// operation can make a dx NaN (Values::no_input_nan; the rows with non-finite
// sums get FillNaN instead). `prefetch`: the same columns of dy in a row
// computed later (next_dy) are prefetched into L2 while dx is written.
template <bool kGamma, class D, typename T, class DxOf>
HWY_INLINE void WriteDx(D d, const T* HWY_RESTRICT dy, const T* HWY_RESTRICT x,
                        const float* HWY_RESTRICT gamma, T* HWY_RESTRICT dx, size_t n, bool stream,
                        const T* HWY_RESTRICT next_dy, bool prefetch, const DxOf& dx_of) {
  using V = hn::Vec<decltype(d)>;
  WriteRowPairs<Values::no_input_nan>(
      d, dx, n, stream,
      [&](size_t i, V& first, V& second) NORMCHECK_INLINE_LAMBDA {
        if (prefetch) PrefetchToL2(next_dy + i);
        V dy0, dy1, x0, x1, g0 = hn::Zero(d), g1 = g0;
        LoadWidenedPair(d, dy + i, dy0, dy1);
        LoadWidenedPair(d, x + i, x0, x1);
        if (kGamma) LoadFloatPair<T>(d, gamma + i, g0, g1);
        first = dx_of(dy0, x0, g0), second = dx_of(dy1, x1, g1);
      },
      [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
        if (prefetch) PrefetchToL2(next_dy + i);
        return dx_of(LoadAsFloatN(d, dy + i, count), LoadAsFloatN(d, x + i, count),
                     kGamma ? LoadAsFloatN(d, gamma + i, count) : hn::Zero(d));
      });
}

// Calls f.template operator()<b>() with b == flag: how a runtime choice (an
// operand present or null) becomes a compile-time one outside the loops.
template <class F>
HWY_INLINE void WithFlag(bool flag, const F& f) {
  if (flag) {
    f.template operator()<true>();
  } else {
    f.template operator()<false>();
  }
}

// The rows [begin, end) of one block of long rows, with its columns spread
// over the pool: task ch runs pass 1 on chunk ch of every row, in row order,
// through pass1(ch, out) (out[j] takes row begin + j's sums over the chunk),
// then, once each row's sums are added in chunk order (fold_chunks' order),
// task ch runs pass 2 on chunk ch of every row through pass2(ch, sums) and
// fences its streamed stores. The results are those of the rows computed
// one after another, and the block costs two hand-offs to the pool instead
// of two per row: split one row at a time, 16x65536 takes 1.6 to 1.8 times
// as long on 2 threads as on 1, this way 0.5 to 0.9 (docs/performance.md).
// Part: a row's sums (+= adds another chunk's).
template <class Part, class Pass1, class Pass2>
void BwdBlockByChunks(int64_t begin, int64_t end, int64_t cols, bool stream, const Pass1& pass1,
                      const Pass2& pass2) {
  const int64_t count = end - begin, chunks = ceil_div(cols, kChunk);
  std::vector<Part> parts(static_cast<size_t>(count * chunks));  // chunk ch, row j: ch * count + j
  parallel_for(chunks, [&](int64_t ch) { pass1(ch, parts.data() + ch * count); });
  std::vector<Part> sums(static_cast<size_t>(count));
  for (int64_t ch = 0; ch < chunks; ++ch) {
    for (int64_t j = 0; j < count; ++j) sums[j] += parts[ch * count + j];
  }
  parallel_for(chunks, [&](int64_t ch) {
    pass2(ch, static_cast<const Part*>(sums.data()));
    if (stream) hwy::FlushStream();  // the task may end on another thread
  });
}

// The rows [begin, end) of one row block, kRowsTogether at a time
// (BwdGroupSize), for both backward kernels: per row group (BwdGroup), pass
// 1 on every chunk through group_sums(group, ch, first, prefetch, out) (the
// group's sums over chunk ch into out[0, k); `first`: the block's first
// rows, whose terms go into the zero of the partial rows), the sums added in
// chunk order, then
// pass 2 row by row through row_dx(group, j, ch, sums, prefetch). `prefetch`:
// rows kBwdGroupsAhead groups ahead exist (x in pass 1, dy in pass 2). One
// FlushStream ends the block's streamed dx (a block is one task). With
// kSplit, BwdBlockByChunks spreads the chunks of all the rows over the pool,
// with the same results. Part: a row's sums.
template <bool kSplit, int64_t kRowsTogether, class Part, typename T, class GroupSums,
          class RowDx>
void BwdRowBlockOf(const BwdRows<T>& rows, int64_t begin, int64_t end,
                   const GroupSums& group_sums, const RowDx& row_dx) {
  // Calls f(group, prefetch) for the row groups of the block, in row order.
  const auto for_each_group = [&](const auto& f) {
    for (int64_t r = begin; r < end;) {
      const int64_t k = BwdGroupSize<kRowsTogether>(end - r);
      f(BwdGroup<T>(rows, r, k), r + k * kBwdGroupsAhead < rows.rows);
      r += k;
    }
  };
  if constexpr (kSplit) {
    BwdBlockByChunks<Part>(
        begin, end, rows.cols, rows.stream(),
        [&](int64_t ch, Part* out) {
          for_each_group([&](const BwdGroup<T>& group, bool prefetch) {
            group_sums(group, ch, group.r == begin, prefetch, out + (group.r - begin));
          });
        },
        [&](int64_t ch, const Part* sums) {
          for_each_group([&](const BwdGroup<T>& group, bool prefetch) {
            for (int64_t j = 0; j < group.k; ++j) {
              row_dx(group, j, ch, sums[group.r - begin + j], prefetch);
            }
          });
        });
  } else {
    const int64_t chunks = ceil_div(rows.cols, kChunk);
    for_each_group([&](const BwdGroup<T>& group, bool prefetch) {
      std::array<Part, kRowsTogether> sums{};
      for (int64_t ch = 0; ch < chunks; ++ch) {
        std::array<Part, kRowsTogether> part{};
        group_sums(group, ch, group.r == begin, prefetch, part.data());
        for (int64_t j = 0; j < group.k; ++j) sums[j] += part[j];
      }
      for (int64_t j = 0; j < group.k; ++j) {
        for (int64_t ch = 0; ch < chunks; ++ch) row_dx(group, j, ch, sums[j], prefetch);
      }
    });
    if (rows.stream()) hwy::FlushStream();
  }
}

// rows_fn.template operator()<kSplit>(begin, end, dgamma_part, dbeta_part)
// computes the rows [begin, end) of one block, in row order, and writes the
// sums of their terms into the block's partial rows (either may be null: not
// wanted): row `begin`'s terms are added to zero, not to what the partial row
// held, so the rows' sums are those of a zero-filled partial row. It ends
// with hwy::FlushStream() if it streamed dx (a block is one task).
template <class RowsFn>
void BackwardInRowBlocks(int64_t rows, int64_t cols, float* dgamma, float* dbeta,
                         const RowsFn& rows_fn) {
  const int64_t blocks = ceil_div(rows, kBwdRowsPerBlock);
  const size_t width = static_cast<size_t>(cols);
  // Not initialised: every block writes its rows before they are read.
  std::unique_ptr<float[]> partials;
  if (blocks > 1) partials.reset(new float[2 * width * static_cast<size_t>(blocks)]);
  const auto partial = [&](int64_t block, int which) {
    return partials.get() + (2 * static_cast<size_t>(block) + which) * width;
  };
  const auto block_rows = [&]<bool kSplit>(int64_t block) {
    float* dgamma_part = !dgamma ? nullptr : blocks == 1 ? dgamma : partial(block, 0);
    float* dbeta_part = !dbeta ? nullptr : blocks == 1 ? dbeta : partial(block, 1);
    const int64_t end = std::min(rows, (block + 1) * kBwdRowsPerBlock);
    rows_fn.template operator()<kSplit>(block * kBwdRowsPerBlock, end, dgamma_part, dbeta_part);
  };
  const bool serial = run_serially(rows, cols);
  if (serial) {
    for (int64_t b = 0; b < blocks; ++b) block_rows.template operator()<false>(b);
  } else if (blocks == 1) {
    if (cols >= kSplitMinCols) {
      block_rows.template operator()<true>(0);
    } else {
      block_rows.template operator()<false>(0);
    }
  } else {
    parallel_for(blocks, [&](int64_t b) { block_rows.template operator()<false>(b); });
  }
  if (blocks == 1) return;

  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  // out[i] = partial 0 + partial 1 + ... (left to right) for the columns
  // [begin, end): the running sums stay in out's slice (in L1) while the
  // partial rows are read one after another, two per pass over the slice.
  const auto merge = [&](float* HWY_RESTRICT out, int which, size_t begin, size_t end) {
    if (!out) return;
    std::copy(partial(0, which) + begin, partial(0, which) + end, out + begin);
    int64_t b = 1;
    for (; b + 1 < blocks; b += 2) {
      const float* HWY_RESTRICT p = partial(b, which);
      const float* HWY_RESTRICT q = partial(b + 1, which);
      size_t i = begin;
      for (; i + N <= end; i += N) {
        const auto sum = hn::Add(hn::LoadU(d, out + i), hn::LoadU(d, p + i));
        hn::StoreU(hn::Add(sum, hn::LoadU(d, q + i)), d, out + i);
      }
      for (; i < end; ++i) out[i] = (out[i] + p[i]) + q[i];
    }
    if (b < blocks) {
      const float* HWY_RESTRICT p = partial(b, which);
      size_t i = begin;
      for (; i + N <= end; i += N) {
        hn::StoreU(hn::Add(hn::LoadU(d, out + i), hn::LoadU(d, p + i)), d, out + i);
      }
      for (; i < end; ++i) out[i] += p[i];
    }
  };
  constexpr int64_t kSlice = 1024;  // columns per merge task
  const int64_t slices = ceil_div(cols, kSlice);
  const auto merge_slice = [&](int64_t s) {
    const size_t begin = static_cast<size_t>(s * kSlice);
    const size_t end = std::min(width, begin + static_cast<size_t>(kSlice));
    merge(dgamma, 0, begin, end);
    merge(dbeta, 1, begin, end);
  };
  if (serial) {
    for (int64_t s = 0; s < slices; ++s) merge_slice(s);
  } else {
    parallel_for(slices, merge_slice);
  }
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_BWD_BLOCKS_INL_H_
