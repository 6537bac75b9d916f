// The LayerNorm backward row, per target, float32 or 16-bit storage for dy, x
// and dx with float32 math. With g = gamma dy and xhat = (x - mean) rstd from
// the saved statistics:
//   pass 1  a = sum g_i, b = sum g_i xhat_i (BwdAccumulators: 4 each, 2 on
//           AVX-512, whose groups hold four rows); the row's dy xhat and dy are
//           added into the dgamma/dbeta partial rows
//   pass 2  dx_i = rstd (g_i - (xhat_i b/d + a/d))
// A row whose sums are not finite (NaN/inf in x, dy or the statistics) gets an
// all-NaN dx. The bound is derived in layernorm_bwd_hwy.cpp.
#if defined(NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#undef NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/highway.h"
#include "simd/bwd_blocks-inl.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// Rows in one pass-1 group (BwdRowBlockOf): 4 where the target has 32
// vector registers (AVX-512), else 2, whose 16 accumulators already fill
// AVX2's 16 registers. Four rows keep each sum in 2 accumulators
// (BwdAccumulators) and halve the partial-row loads and stores of a pair
// again. Against pairs (normcheck_compare_builds, docs/performance.md), one
// thread: 0.91 and 0.92 of the time for float32 on 4096x1024, 4096x4096 and
// 256x65536, 0.89 to 0.92 for 16-bit on the last two (1.00 and 1.02 on
// 4096x1024); two threads: 0.91 to 0.97 on 4096x4096, 0.99 to 1.02 on
// 256x65536, where two threads share the memory.
#if HWY_TARGET <= HWY_AVX3
inline constexpr int64_t kLayerNormBwdRowsTogether = 4;
#else
inline constexpr int64_t kLayerNormBwdRowsTogether = 2;
#endif

struct BwdSums {
  float g = 0, g_xhat = 0;
  BwdSums& operator+=(const BwdSums& other) {
    g += other.g;
    g_xhat += other.g_xhat;
    return *this;
  }
};

// Pass 1 on one chunk (n columns) of K rows (1, 2 or 4: BwdGroupSize): row j at
// dy[j], x[j] with statistics mean[j], rstd[j]; sums[j] gets its a and b, each
// summed in BwdAccumulators(kLayerNormBwdRowsTogether, 2) accumulators, as
// many for every K (a row's bits do not depend on its group). The rows share each gamma
// vector and each partial-row vector, which takes row 0's term, then row 1's,
// and so on, in a register: the roundings of one row at a time. The loops over
// rows and accumulators (ForEachIndex) have constant indices, so the arrays
// below live in registers. kGamma: gamma is present (otherwise g = dy, which is
// gamma = 1's product); dgamma_part, dbeta_part may be null (not wanted);
// `first`: the partial rows start from zero here (their contents unread).
// `prefetch`: the same columns of x in rows computed later (next_x[j]) are
// prefetched into L2 (their dy in pass 2: BwdDxChunk), so that reading from
// memory overlaps both passes. Only gamma's presence is a template parameter:
// it changes the arithmetic, while the other choices are branches the predictor
// settles, and each parameter multiplies the instantiations (per target and
// storage type) that a build compiles. Full width for f16 too, unlike the
// RMSNorm backward (RmsBwdSumChunk): with 8 lanes this pass made a 1x768 f16
// call 1.24 times as long (twice the loop trips), while 4096x4096 took 0.89
// (one thread) and 0.94 (two) of the time; 8 lanes for the dx pass alone
// changed nothing outside the noise, and for both passes gave 1.10 and 1.13 on
// 1x768, 0.93 and 0.94 on 4096x4096.
template <int K, bool kGamma, typename T>
void BwdSumsChunk(const T* const* dy, const T* const* x, const float* mean, const float* rstd,
                  const float* HWY_RESTRICT gamma, float* HWY_RESTRICT dgamma_part,
                  float* HWY_RESTRICT dbeta_part, size_t n, bool first,
                  const T* const* next_x, bool prefetch, BwdSums* sums) {
  static_assert(K == 1 || K == 2 || K == 4);
  const bool want_dgamma = dgamma_part != nullptr, want_dbeta = dbeta_part != nullptr;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const size_t N = hn::Lanes(d);
  constexpr size_t U = BwdAccumulators(kLayerNormBwdRowsTogether, 2);
  static_assert(U == 4 || hn::MaxLanes(hn::ScalableTag<float>()) >= 2);  // summation_depth
  constexpr size_t kLineElements = 64 / sizeof(T);  // of one cache line
  const T* HWY_RESTRICT dy_row[K];
  const T* HWY_RESTRICT x_row[K];
  const T* HWY_RESTRICT next_x_row[K];
  V m[K], r[K], a[K][U], b[K][U];
  ForEachIndex<K>([&](auto j) NORMCHECK_INLINE_LAMBDA {
    dy_row[j] = dy[j], x_row[j] = x[j], next_x_row[j] = next_x[j];
    m[j] = hn::Set(d, mean[j]), r[j] = hn::Set(d, rstd[j]);
    ForEachIndex<U>([&](auto u) NORMCHECK_INLINE_LAMBDA { a[j][u] = b[j][u] = hn::Zero(d); });
  });
  // Column i of the K rows (count valid lanes; the others are zero in dy, so
  // they add nothing: 0 * xhat is 0 once xhat's padding is zeroed), into
  // accumulators a[j][u], b[j][u] of row j.
  const auto column = [&]<bool kFull>(size_t i, size_t count, auto u) NORMCHECK_INLINE_LAMBDA {
    V gm = hn::Zero(d), pg = hn::Zero(d), pb = hn::Zero(d);
    if constexpr (kGamma) {
      gm = kFull ? hn::LoadU(d, gamma + i) : LoadAsFloatTail(d, gamma + i, count);
    }
    if (want_dgamma && !first) {
      pg = kFull ? hn::LoadU(d, dgamma_part + i) : LoadAsFloatTail(d, dgamma_part + i, count);
    }
    if (want_dbeta && !first) {
      pb = kFull ? hn::LoadU(d, dbeta_part + i) : LoadAsFloatTail(d, dbeta_part + i, count);
    }
    ForEachIndex<K>([&](auto j) NORMCHECK_INLINE_LAMBDA {
      const V vdy =
          kFull ? LoadAsFloat(d, dy_row[j] + i) : LoadAsFloatTail(d, dy_row[j] + i, count);
      const V vx = kFull ? LoadAsFloat(d, x_row[j] + i) : LoadAsFloatTail(d, x_row[j] + i, count);
      V xhat = hn::Mul(hn::Sub(vx, m[j]), r[j]);
      if constexpr (!kFull) xhat = hn::IfThenElseZero(hn::FirstN(d, count), xhat);
      const V g = kGamma ? hn::Mul(gm, vdy) : vdy;
      a[j][u] = hn::Add(a[j][u], g);
      b[j][u] = hn::MulAdd(g, xhat, b[j][u]);
      if (want_dgamma) pg = hn::MulAdd(vdy, xhat, pg);
      if (want_dbeta) pb = hn::Add(pb, vdy);
    });
    if (want_dgamma) {
      if constexpr (kFull) {
        hn::StoreU(pg, d, dgamma_part + i);
      } else {
        StoreFromFloatTail(d, pg, dgamma_part + i, count);
      }
    }
    if (want_dbeta) {
      if constexpr (kFull) {
        hn::StoreU(pb, d, dbeta_part + i);
      } else {
        StoreFromFloatTail(d, pb, dbeta_part + i, count);
      }
    }
  };
  size_t i = 0;
  for (; i + U * N <= n; i += U * N) {
    if (prefetch) {
      ForEachIndex<K>([&](auto j) NORMCHECK_INLINE_LAMBDA {
        for (size_t line = 0; line < U * N; line += kLineElements) {
          PrefetchToL2(next_x_row[j] + i + line);
        }
      });
    }
    ForEachIndex<U>([&](auto u) NORMCHECK_INLINE_LAMBDA {
      column.template operator()<true>(i + u * N, N, u);
    });
  }
  constexpr std::integral_constant<size_t, 0> kFirst;
  for (; i + N <= n; i += N) column.template operator()<true>(i, N, kFirst);
  if (i < n) column.template operator()<false>(i, n - i, kFirst);
  ForEachIndex<K>([&](auto j) NORMCHECK_INLINE_LAMBDA {
    sums[j].g = SumLanesPairwise(d, AddAccumulators(a[j]));
    sums[j].g_xhat = SumLanesPairwise(d, AddAccumulators(b[j]));
  });
}

// Pass 2 on one chunk of one row: dx_i = rstd (g_i - (xhat_i B + A)) with
// A = a/d, B = b/d. The row's sums are finite, so every g_i and xhat_i is
// (a NaN or infinite one makes a or b NaN or infinite, 0 * inf included), and
// so are rstd (else xhat is not), A and B: a NaN in dx can only come from an
// invalid operation (rstd 0 times an overflowed difference), the default NaN
// that WriteDx allows (`prefetch` there).
template <bool kGamma, typename T>
void BwdDxChunk(const T* HWY_RESTRICT dy, const T* HWY_RESTRICT x,
                const float* HWY_RESTRICT gamma, T* HWY_RESTRICT dx, size_t n, bool stream,
                const T* HWY_RESTRICT next_dy, bool prefetch, float mean, float rstd, float A,
                float B) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const auto m = hn::Set(d, mean), r = hn::Set(d, rstd);
  const auto va = hn::Set(d, A), vb = hn::Set(d, B);
  const auto dx_of = [&](V vdy, V vx, V vgamma) NORMCHECK_INLINE_LAMBDA {
    const V g = kGamma ? hn::Mul(vgamma, vdy) : vdy;
    const V xhat = hn::Mul(hn::Sub(vx, m), r);
    return hn::Mul(r, hn::Sub(g, hn::MulAdd(xhat, vb, va)));
  };
  WriteDx<kGamma>(d, dy, x, gamma, dx, n, stream, next_dy, prefetch, dx_of);
}

// Pass 1 on chunk ch of the rows of `group`: their sums over the chunk into
// out[0, k), their terms added into the block's partial rows (nullable) in
// row order (`first`: into zero, the block's first rows).
template <typename T>
void BwdGroupSums(const BwdGroup<T>& group, int64_t cols, int64_t ch, bool first,
                  const float* gamma, const float* mean, const float* rstd, float* dgamma_part,
                  float* dbeta_part, bool prefetch, BwdSums* out) {
  const size_t n = chunk_length(cols, ch);
  const auto in = group.chunk(ch);
  const float* gamma_ch = chunk_start(gamma, ch);
  float* dgamma_ch = chunk_start(dgamma_part, ch);
  float* dbeta_ch = chunk_start(dbeta_part, ch);
  const int64_t r = group.r;
  WithFlag(gamma != nullptr, [&]<bool kGamma>() {
    WithGroupSize<kLayerNormBwdRowsTogether>(group.k, [&]<int K>() {
      BwdSumsChunk<K, kGamma>(in.dy, in.x, mean + r, rstd + r, gamma_ch, dgamma_ch, dbeta_ch, n,
                              first, in.next_x, prefetch, out);
    });
  });
}

// Pass 2 on chunk ch of row j of `group`, whose sums over the row are `sums`
// (not finite: the row holds NaN or inf, its dx is NaN).
template <typename T>
void BwdRowDx(const BwdRows<T>& rows, const BwdGroup<T>& group, int64_t j, int64_t ch,
              const BwdSums& sums, const float* gamma, const float* mean, const float* rstd,
              bool prefetch) {
  const int64_t r = group.r + j;
  const size_t n = chunk_length(rows.cols, ch);
  T* dx = rows.dx + r * rows.cols + ch * kChunk;
  if (!std::isfinite(sums.g) || !std::isfinite(sums.g_xhat)) {
    FillNaN(dx, n);
    return;
  }
  const float d = static_cast<float>(rows.cols);
  const float A = sums.g / d, B = sums.g_xhat / d;
  WithFlag(gamma != nullptr, [&]<bool kGamma>() {
    BwdDxChunk<kGamma>(chunk_start(group.dy[j], ch), chunk_start(group.x[j], ch),
                       chunk_start(gamma, ch), dx, n, rows.stream(),
                       chunk_start(group.next_dy[j], ch), prefetch, mean[r], rstd[r], A, B);
  });
}

// The rows [begin, end) of one row block (BwdRowBlockOf).
template <bool kSplit, typename T>
void BwdRowBlock(const BwdRows<T>& rows, int64_t begin, int64_t end, const float* gamma,
                 const float* mean, const float* rstd, float* dgamma_part, float* dbeta_part) {
  BwdRowBlockOf<kSplit, kLayerNormBwdRowsTogether, BwdSums>(
      rows, begin, end,
      [&](const BwdGroup<T>& group, int64_t ch, bool first, bool prefetch, BwdSums* out) {
        BwdGroupSums(group, rows.cols, ch, first, gamma, mean, rstd, dgamma_part, dbeta_part,
                     prefetch, out);
      },
      [&](const BwdGroup<T>& group, int64_t j, int64_t ch, const BwdSums& sums, bool prefetch) {
        BwdRowDx(rows, group, j, ch, sums, gamma, mean, rstd, prefetch);
      });
}

// The whole LayerNorm backward (row blocks: bwd_blocks-inl.h).
template <typename T>
void LayerNormBwdRows(const T* dy, const T* x, const float* gamma, const float* mean,
                      const float* rstd, T* dx, float* dgamma, float* dbeta, int64_t rows,
                      int64_t cols) {
  const BwdRows<T> all{dy, x, dx, rows, cols};
  BackwardInRowBlocks(
      rows, cols, dgamma, dbeta,
      [&]<bool kSplit>(int64_t begin, int64_t end, float* dgamma_part, float* dbeta_part) {
        BwdRowBlock<kSplit>(all, begin, end, gamma, mean, rstd, dgamma_part, dbeta_part);
      });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
