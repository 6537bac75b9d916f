// The LayerNorm backward row, per target, float32 or 16-bit storage for dy, x
// and dx with float32 math. With g = gamma dy and xhat = (x - mean) rstd from
// the saved statistics:
//   pass 1  a = sum g_i, b = sum g_i xhat_i (4 accumulators each); the row's
//           dy xhat and dy are added into the dgamma/dbeta partial rows
//   pass 2  dx_i = rstd (g_i - (xhat_i b/d + a/d))
// A row whose sums are not finite (NaN/inf in x, dy or the statistics) gets an
// all-NaN dx. The bound is derived in layernorm_bwd_hwy.cpp.
#if defined(NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#undef NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hwy/highway.h"
#include "simd/bwd_blocks-inl.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

struct BwdSums {
  float g = 0, g_xhat = 0;
};

template <typename T>
BwdSums BwdSumsChunk(const BwdChunk<T>& c, float mean, float rstd) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto m = hn::Set(d, mean), r = hn::Set(d, rstd), one = hn::Set(d, 1.0f);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
  // One vector at column i (count valid lanes; the others are zero in dy, so
  // they add nothing: 0 * xhat is 0 for the finite padding x = 0).
  const auto step = [&](auto& a, auto& b, size_t i, size_t count) {
    const auto dy = LoadAsFloatN(d, c.dy + i, count);
    const auto x = LoadAsFloatN(d, c.x + i, count);
    const auto gamma = c.gamma ? LoadAsFloatN(d, c.gamma + i, count) : one;
    const auto xhat = hn::IfThenElseZero(hn::FirstN(d, count), hn::Mul(hn::Sub(x, m), r));
    const auto g = hn::Mul(gamma, dy);
    a = hn::Add(a, g);
    b = hn::MulAdd(g, xhat, b);
    if (c.dgamma_part) {
      UpdateFloatsN(d, c.dgamma_part + i, count,
                    [&](auto sum) { return hn::MulAdd(dy, xhat, sum); });
    }
    if (c.dbeta_part) {
      UpdateFloatsN(d, c.dbeta_part + i, count, [&](auto sum) { return hn::Add(sum, dy); });
    }
  };
  size_t i = 0;
  for (; i + 4 * N <= c.n; i += 4 * N) {
    step(a0, b0, i, N);
    step(a1, b1, i + N, N);
    step(a2, b2, i + 2 * N, N);
    step(a3, b3, i + 3 * N, N);
  }
  for (; i + N <= c.n; i += N) step(a0, b0, i, N);
  if (i < c.n) step(a0, b0, i, c.n - i);
  BwdSums out;
  out.g = SumLanesPairwise(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
  out.g_xhat = SumLanesPairwise(d, hn::Add(hn::Add(b0, b1), hn::Add(b2, b3)));
  return out;
}

// dx_i = rstd (g_i - (xhat_i B + A)) with A = a/d, B = b/d.
template <typename T>
void BwdDxChunk(const BwdChunk<T>& c, float mean, float rstd, float A, float B) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, mean), r = hn::Set(d, rstd), one = hn::Set(d, 1.0f);
  const auto va = hn::Set(d, A), vb = hn::Set(d, B);
  const auto dx_of = [&](size_t i, size_t count) {
    const auto dy = LoadAsFloatN(d, c.dy + i, count);
    const auto x = LoadAsFloatN(d, c.x + i, count);
    const auto gamma = c.gamma ? LoadAsFloatN(d, c.gamma + i, count) : one;
    const auto xhat = hn::Mul(hn::Sub(x, m), r);
    return hn::Mul(r, hn::Sub(hn::Mul(gamma, dy), hn::MulAdd(xhat, vb, va)));
  };
  WriteRow(d, c.dx, c.n, c.stream, [&](size_t i, size_t count) {
    PrefetchNext(c, i);
    return dx_of(i, count);
  });
}

template <typename T>
void FillNaN(T* p, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  size_t i = 0;
  for (; i + N <= n; i += N) StoreFromFloat(d, nan, p + i);
  if (i < n) StoreFromFloatTail(d, nan, p + i, n - i);
}

// One backward row (row r of `rows`): dgamma_part/dbeta_part (nullable) are
// the row block's partial sums, which this row adds into.
template <bool kSplit, typename T>
void BwdRow(const BwdRows<T>& rows, int64_t r, const float* gamma, float mean, float rstd,
            float* dgamma_part, float* dbeta_part) {
  const int64_t cols = rows.cols, chunks = ceil_div(cols, kChunk);
  const T* dy = rows.dy + r * cols;
  const T* x = rows.x + r * cols;
  T* dx = rows.dx + r * cols;
  const T* next_dy = rows.template next<kSplit>(rows.dy, r);
  const T* next_x = rows.template next<kSplit>(rows.x, r);
  const bool stream = rows.stream();
  const auto chunk = [&](int64_t ch) {
    return BwdChunk<T>{chunk_start(dy, ch),         chunk_start(x, ch),
                       chunk_start(gamma, ch),      chunk_start(dgamma_part, ch),
                       chunk_start(dbeta_part, ch), chunk_start(dx, ch),
                       chunk_length(cols, ch),      chunk_start(next_dy, ch),
                       chunk_start(next_x, ch),     stream};
  };
  BwdSums sums;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return BwdSumsChunk(chunk(ch), mean, rstd); },
      [&](const BwdSums& part) {
        sums.g += part.g;
        sums.g_xhat += part.g_xhat;
      });
  if (!std::isfinite(sums.g) || !std::isfinite(sums.g_xhat)) {
    FillNaN(dx, static_cast<size_t>(cols));
    return;
  }
  const float d = static_cast<float>(cols);
  const float A = sums.g / d, B = sums.g_xhat / d;
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    BwdDxChunk(chunk(ch), mean, rstd, A, B);
    if (kSplit && stream) hwy::FlushStream();  // this chunk's task may end on another thread
  });
  if (!kSplit && stream) hwy::FlushStream();  // once per row (layernorm_fwd_hwy-inl.h)
}

// The whole LayerNorm backward (row blocks: bwd_blocks-inl.h).
template <typename T>
void LayerNormBwdRows(const T* dy, const T* x, const float* gamma, const float* mean,
                      const float* rstd, T* dx, float* dgamma, float* dbeta, int64_t rows,
                      int64_t cols) {
  const BwdRows<T> all{dy, x, dx, rows, cols};
  BackwardInRowBlocks(rows, cols, dgamma, dbeta,
                      [&]<bool kSplit>(int64_t r, float* dgamma_part, float* dbeta_part) {
                        BwdRow<kSplit>(all, r, gamma, mean[r], rstd[r], dgamma_part, dbeta_part);
                      });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_BWD_HWY_INL_H_
