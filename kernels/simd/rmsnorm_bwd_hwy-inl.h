// The RMSNorm backward row, per target, float32 or 16-bit storage for dy, x
// and dx with float32 math (gamma, the saved rrms and dgamma stay float32).
// With g = gamma dy and xhat = x rrms (saved rrms):
//   pass 1  b = sum g_i xhat_i (4 accumulators); dy xhat into the dgamma partial
//   pass 2  dx_i = rrms (g_i - xhat_i b/d)
// A row whose sum is not finite gets an all-NaN dx. Rows go in fixed blocks
// (bwd_blocks-inl.h: dgamma bit-identical for every thread count). The bound
// is derived in rmsnorm_bwd_hwy.cpp.
#if defined(NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_
#undef NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/highway.h"
#include "simd/bwd_blocks-inl.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// Rows in one pass-1 group (BwdRowBlockOf): 2. Groups of 4 rows (the
// LayerNorm backward's choice on AVX-512; 4 rows of one sum fit 4
// accumulators each) took 0.97 to 1.03 of the time on most shapes and 1.13
// for f16 on 4096x4096 (two threads, normcheck_compare_builds). The pass
// stays written for 1 or 2 rows: generic over the group size, as
// BwdSumsChunk is, it made a 1x768 float32 call 1.04 to 1.06 times as long
// (three runs; 1.00 with this form).
inline constexpr int64_t kRmsBwdRowsTogether = 2;

// Pass 1 on one chunk (n columns) of K rows (1 or 2, kRmsBwdRowsTogether):
// row j at dy[j], x[j] with saved rrms[j]; sums[j] gets its b. The rows
// share each gamma vector and each dgamma partial vector, which takes row
// 0's term, then row 1's, in a register: the roundings of one row at a
// time. kGamma: gamma is present (otherwise g = dy, which is gamma = 1's
// product); dgamma_part may be null (not wanted); `first`: the partial row
// starts from zero here (its contents unread). `prefetch`: the same columns
// of x in rows computed later (next_x[j]) are prefetched into L2 (their dy
// in pass 2: RmsBwdDxChunk), so that reading from memory overlaps both
// passes. Only gamma's presence is a template parameter (BwdSumsChunk in
// layernorm_bwd_hwy-inl.h says why). Both passes take FloatTag's vectors, 8
// lanes for f16 on AVX-512: with 16 (512-bit F16C conversions) the f16 row
// took 1.1 to 1.17 times as long on 1x768, 64x768 and 4096x4096, one and two
// threads, alternating runs, and as long on 256x65536 (the LayerNorm backward
// keeps 16: BwdSumsChunk).
template <int K, bool kGamma, typename T>
void RmsBwdSumChunk(const T* const* dy, const T* const* x, const float* rrms,
                    const float* HWY_RESTRICT gamma, float* HWY_RESTRICT dgamma_part, size_t n,
                    bool first, const T* const* next_x, bool prefetch, float* sums) {
  static_assert(K == 1 || K == 2);
  const bool want_dgamma = dgamma_part != nullptr;
  const FloatTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  constexpr size_t kLineElements = 64 / sizeof(T);  // of one cache line
  const T* HWY_RESTRICT dy0 = dy[0];
  const T* HWY_RESTRICT x0 = x[0];
  const T* HWY_RESTRICT dy1 = dy[K - 1];
  const T* HWY_RESTRICT x1 = x[K - 1];
  const T* HWY_RESTRICT next_x0 = next_x[0];
  const T* HWY_RESTRICT next_x1 = next_x[K - 1];
  const V r0 = hn::Set(d, rrms[0]), r1 = hn::Set(d, rrms[K - 1]);
  V b00 = hn::Zero(d), b01 = hn::Zero(d), b02 = hn::Zero(d), b03 = hn::Zero(d);
  V b10 = hn::Zero(d), b11 = hn::Zero(d), b12 = hn::Zero(d), b13 = hn::Zero(d);
  // One row's terms at column i (count valid lanes; padding: dy = 0, x = 0).
  const auto row = [&]<bool kFull>(const T* HWY_RESTRICT dy_row, const T* HWY_RESTRICT x_row,
                                   V r, V gm, size_t i, size_t count, V& b,
                                   V& pg) NORMCHECK_INLINE_LAMBDA {
    const V vdy = kFull ? LoadAsFloat(d, dy_row + i) : LoadAsFloatTail(d, dy_row + i, count);
    const V vx = kFull ? LoadAsFloat(d, x_row + i) : LoadAsFloatTail(d, x_row + i, count);
    const V xhat = hn::Mul(vx, r);
    b = hn::MulAdd(kGamma ? hn::Mul(gm, vdy) : vdy, xhat, b);
    if (want_dgamma) pg = hn::MulAdd(vdy, xhat, pg);
  };
  // Column i of the K rows, into accumulators b0 (row 0) and b1 (row 1).
  const auto column = [&]<bool kFull>(size_t i, size_t count, V& b0,
                                      V& b1) NORMCHECK_INLINE_LAMBDA {
    V gm = hn::Zero(d), pg = hn::Zero(d);
    if constexpr (kGamma) {
      gm = kFull ? hn::LoadU(d, gamma + i) : LoadAsFloatTail(d, gamma + i, count);
    }
    if (want_dgamma && !first) {
      pg = kFull ? hn::LoadU(d, dgamma_part + i) : LoadAsFloatTail(d, dgamma_part + i, count);
    }
    row.template operator()<kFull>(dy0, x0, r0, gm, i, count, b0, pg);
    if constexpr (K == 2) row.template operator()<kFull>(dy1, x1, r1, gm, i, count, b1, pg);
    if (want_dgamma) {
      if constexpr (kFull) {
        hn::StoreU(pg, d, dgamma_part + i);
      } else {
        StoreFromFloatTail(d, pg, dgamma_part + i, count);
      }
    }
  };
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    if (prefetch) {
      for (size_t line = 0; line < 4 * N; line += kLineElements) {
        PrefetchToL2(next_x0 + i + line);
        if constexpr (K == 2) PrefetchToL2(next_x1 + i + line);
      }
    }
    column.template operator()<true>(i, N, b00, b10);
    column.template operator()<true>(i + N, N, b01, b11);
    column.template operator()<true>(i + 2 * N, N, b02, b12);
    column.template operator()<true>(i + 3 * N, N, b03, b13);
  }
  for (; i + N <= n; i += N) column.template operator()<true>(i, N, b00, b10);
  if (i < n) column.template operator()<false>(i, n - i, b00, b10);
  sums[0] = SumLanesPairwise(d, hn::Add(hn::Add(b00, b01), hn::Add(b02, b03)));
  if constexpr (K == 2) {
    sums[1] = SumLanesPairwise(d, hn::Add(hn::Add(b10, b11), hn::Add(b12, b13)));
  }
}

// Pass 2 on one chunk of one row: dx_i = rrms (g_i - xhat_i B) with B = b/d.
// The row's sum is finite, so every g_i and xhat_i is (a NaN or infinite one
// makes b NaN or infinite, 0 * inf included), and so are rrms and B: a NaN in
// dx can only come from an invalid operation (rrms 0 times an overflowed
// difference), the default NaN that WriteDx allows (`prefetch` there).
template <bool kGamma, typename T>
void RmsBwdDxChunk(const T* HWY_RESTRICT dy, const T* HWY_RESTRICT x,
                   const float* HWY_RESTRICT gamma, T* HWY_RESTRICT dx, size_t n, bool stream,
                   const T* HWY_RESTRICT next_dy, bool prefetch, float rrms, float B) {
  const FloatTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const auto r = hn::Set(d, rrms), vb = hn::Set(d, B);
  const auto dx_of = [&](V vdy, V vx, V vgamma) NORMCHECK_INLINE_LAMBDA {
    const V g = kGamma ? hn::Mul(vgamma, vdy) : vdy;
    return hn::Mul(r, hn::NegMulAdd(hn::Mul(vx, r), vb, g));
  };
  WriteDx<kGamma>(d, dy, x, gamma, dx, n, stream, next_dy, prefetch, dx_of);
}

// Pass 1 on chunk ch of the rows of `group`: their sums over the chunk into
// out[0, k), their terms added into the block's dgamma_part (nullable) in
// row order (`first`: into zero, the block's first rows).
template <typename T>
void RmsBwdGroupSums(const BwdGroup<T>& group, int64_t cols, int64_t ch, bool first,
                     const float* gamma, const float* rrms, float* dgamma_part, bool prefetch,
                     float* out) {
  const size_t n = chunk_length(cols, ch);
  const auto in = group.chunk(ch);
  const float* gamma_ch = chunk_start(gamma, ch);
  float* dgamma_ch = chunk_start(dgamma_part, ch);
  WithFlag(gamma != nullptr, [&]<bool kGamma>() {
    WithGroupSize<kRmsBwdRowsTogether>(group.k, [&]<int K>() {
      RmsBwdSumChunk<K, kGamma>(in.dy, in.x, rrms + group.r, gamma_ch, dgamma_ch, n, first,
                                in.next_x, prefetch, out);
    });
  });
}

// Pass 2 on chunk ch of row j of `group`, whose sum over the row is `sum`
// (not finite: the row holds NaN or inf, its dx is NaN).
template <typename T>
void RmsBwdRowDx(const BwdRows<T>& rows, const BwdGroup<T>& group, int64_t j, int64_t ch,
                 float sum, const float* gamma, const float* rrms, bool prefetch) {
  const int64_t r = group.r + j;
  const size_t n = chunk_length(rows.cols, ch);
  T* dx = rows.dx + r * rows.cols + ch * kChunk;
  if (!std::isfinite(sum)) {
    FillNaN(dx, n);
    return;
  }
  const float B = sum / static_cast<float>(rows.cols);
  WithFlag(gamma != nullptr, [&]<bool kGamma>() {
    RmsBwdDxChunk<kGamma>(chunk_start(group.dy[j], ch), chunk_start(group.x[j], ch),
                          chunk_start(gamma, ch), dx, n, rows.stream(),
                          chunk_start(group.next_dy[j], ch), prefetch, rrms[r], B);
  });
}

// The rows [begin, end) of one row block (BwdRowBlockOf).
template <bool kSplit, typename T>
void RmsBwdRowBlock(const BwdRows<T>& rows, int64_t begin, int64_t end, const float* gamma,
                    const float* rrms, float* dgamma_part) {
  BwdRowBlockOf<kSplit, kRmsBwdRowsTogether, float>(
      rows, begin, end,
      [&](const BwdGroup<T>& group, int64_t ch, bool first, bool prefetch, float* out) {
        RmsBwdGroupSums(group, rows.cols, ch, first, gamma, rrms, dgamma_part, prefetch, out);
      },
      [&](const BwdGroup<T>& group, int64_t j, int64_t ch, float sum, bool prefetch) {
        RmsBwdRowDx(rows, group, j, ch, sum, gamma, rrms, prefetch);
      });
}

// The whole RMSNorm backward (row blocks: bwd_blocks-inl.h).
template <typename T>
void RmsNormBwdRows(const T* dy, const T* x, const float* gamma, const float* rrms, T* dx,
                    float* dgamma, int64_t rows, int64_t cols) {
  const BwdRows<T> all{dy, x, dx, rows, cols};
  BackwardInRowBlocks(rows, cols, dgamma, nullptr,
                      [&]<bool kSplit>(int64_t begin, int64_t end, float* dgamma_part, float*) {
                        RmsBwdRowBlock<kSplit>(all, begin, end, gamma, rrms, dgamma_part);
                      });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_
