// The fast LayerNorm forward row, per target, for float32 or 16-bit storage
// with float32 math: two passes over the row while it sits in L1 (sum, then
// sum of squared deviations), a third writes y and prefetches the next row
// (so the next row's DRAM reads overlap this row's arithmetic instead of
// following it: about 15% of a memory-bound 4096x4096 call). A constant row (spotted by
// its tiny squares, then confirmed bit by bit) gets its value as the mean.
// Chunks hand on their sums as vectors, added in chunk order; the lanes are
// added once per row. Rows whose float statistics overflow or underflow,
// and rows holding NaN or inf, take the accurate
// float64 row instead (layernorm_fwd_accurate-inl.h), which meets a tighter
// bound and the NaN semantics. The bound is derived in layernorm_fwd_hwy.cpp.
#if defined(NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_
#undef NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "simd/hwy_bounds.h"
#include "simd/hwy_io-inl.h"
#include "simd/layernorm_fwd_accurate-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// Pass 1 on a chunk: the sum (4 accumulators), per lane.
template <typename T>
LaneSums FastSumChunk(const T* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, LoadAsFloat(d, x + i));
    a1 = hn::Add(a1, LoadAsFloat(d, x + i + N));
    a2 = hn::Add(a2, LoadAsFloat(d, x + i + 2 * N));
    a3 = hn::Add(a3, LoadAsFloat(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, LoadAsFloat(d, x + i));
  if (i < n) a0 = hn::Add(a0, LoadAsFloatTail(d, x + i, n - i));
  LaneSums out;
  hn::Store(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), d, out.lane);
  return out;
}

// Whether all n elements have the same bits (usually settled by the second).
template <typename T>
bool AllSameBits(const T* HWY_RESTRICT x, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    if (std::memcmp(x + i, x, sizeof(T)) != 0) return false;
  }
  return true;
}

// Pass 2 on a chunk: sum of (x_i - m)^2 (4 accumulators, fused multiply-add),
// per lane.
template <typename T>
LaneSums FastSquaresChunk(const T* HWY_RESTRICT x, size_t n, float m) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto mean = hn::Set(d, m);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  const auto square = [&](auto& acc, auto v) {
    const auto t = hn::Sub(v, mean);
    acc = hn::MulAdd(t, t, acc);
  };
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    square(a0, LoadAsFloat(d, x + i));
    square(a1, LoadAsFloat(d, x + i + N));
    square(a2, LoadAsFloat(d, x + i + 2 * N));
    square(a3, LoadAsFloat(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) square(a0, LoadAsFloat(d, x + i));
  if (i < n) {  // padding lanes would add m^2: zero their deviation
    const auto t = hn::IfThenElseZero(hn::FirstN(d, n - i),
                                      hn::Sub(LoadAsFloatTail(d, x + i, n - i), mean));
    a0 = hn::MulAdd(t, t, a0);
  }
  LaneSums out;
  hn::Store(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), d, out.lane);
  return out;
}

// Pass 3 on a chunk: y = gamma * ((x - m) * r) + beta; gamma/beta may be null.
// `prefetch` (may be null) is the next row's chunk, fetched meanwhile.
template <typename T>
void FastOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                     const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, float m,
                     float r, bool stream, const T* prefetch) {
  const hn::ScalableTag<float> d;
  const auto mean = hn::Set(d, m), scale = hn::Set(d, r);
  const auto one = hn::Set(d, 1.0f), zero = hn::Zero(d);
  const auto xhat = [&](size_t i, size_t count) {
    if (prefetch) hwy::Prefetch(prefetch + i);
    return hn::Mul(hn::Sub(LoadAsFloatN(d, x + i, count), mean), scale);
  };
  if (!gamma && !beta) {
    WriteRow(d, y, n, stream, xhat);
    return;
  }
  WriteRow(d, y, n, stream, [&](size_t i, size_t count) {
    return hn::MulAdd(gamma ? LoadAsFloatN(d, gamma + i, count) : one, xhat(i, count),
                      beta ? LoadAsFloatN(d, beta + i, count) : zero);
  });
}

// One row of the fast kernel; kSplit spreads its chunks over the pool with the
// same result. mean/rstd/next_row may be null; next_row (the row computed
// after this one) is prefetched in pass 3.
template <bool kSplit, typename T>
void FastRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
             const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, float* mean, float* rstd,
             int64_t cols, float eps, bool stream, const T* next_row) {
  const int64_t chunks = ceil_div(cols, kChunk);
  const hn::ScalableTag<float> df;
  auto lanes = hn::Zero(df);
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return FastSumChunk(x + ch * kChunk, chunk_length(cols, ch)); },
      [&](const LaneSums& part) { lanes = hn::Add(lanes, hn::Load(df, part.lane)); });
  const float sum = SumLanesPairwise(df, lanes);
  const float d = static_cast<float>(cols);
  float m = sum / d;
  float squares = 0;
  if (std::isfinite(sum)) {
    lanes = hn::Zero(df);
    fold_chunks<kSplit>(
        chunks,
        [&](int64_t ch) { return FastSquaresChunk(x + ch * kChunk, chunk_length(cols, ch), m); },
        [&](const LaneSums& part) { lanes = hn::Add(lanes, hn::Load(df, part.lane)); });
    squares = SumLanesPairwise(df, lanes);
  }
  // A constant row's mean must be its value (the rounded sum / d need not be,
  // and would leave a spurious variance). Its squares are at most
  // d (g(n+1) m)^2, far below this threshold; only then compare the bits.
  bool constant = false;
  if (std::isfinite(sum) && squares <= d * (0x1p-8f * m) * (0x1p-8f * m) && AllSameBits(x, cols)) {
    constant = true;
    m = hn::GetLane(LoadAsFloatTail(df, x, 1));
    squares = 0;
  }
  // Float statistics are trusted when the sums stayed finite and the squares
  // did not come near underflow (>= 2^-80 d keeps the loss below 2^-70
  // relative); otherwise (NaN/inf in the row, overflow, underflow) the row is
  // recomputed in float64.
  const bool trusted = std::isfinite(sum) && std::isfinite(squares) &&
                       (constant || squares >= 0x1p-80f * d);
  if (!trusted) {
    AccurateRow<kSplit>(accurate_exact_below(cols, hn::Lanes(hn::ScalableTag<double>())), x, gamma,
                        beta, y, mean, rstd, cols, eps, stream, next_row);
    return;
  }
  const float r = 1.0f / std::sqrt(squares / d + eps);
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    FastOutputChunk(x + ch * kChunk, chunk_start(gamma, ch), chunk_start(beta, ch),
                    y + ch * kChunk, chunk_length(cols, ch), m, r, stream,
                    chunk_start(next_row, ch));
    // Non-temporal stores must be fenced before another thread reads y: once
    // per row (a fence per chunk cost 30% of a memory-bound call), or per
    // chunk when chunks are tasks that may end on different threads.
    if (kSplit && stream) hwy::FlushStream();
  });
  if (!kSplit && stream) hwy::FlushStream();
  if (mean) *mean = m;
  if (rstd) *rstd = r;
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_
