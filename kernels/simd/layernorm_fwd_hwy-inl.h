// The fast LayerNorm forward row, per target, for float32 or 16-bit storage
// with float32 math: the centred two-pass of the accurate row in float32.
//
//   m       the mean of the first kPrefixLength elements (float64, then float)
//   pass B  t_i = x_i - m: S1 = sum t_i and S2 = sum t_i^2 in one pass in L1;
//           c = S1/d; if 16 c^2 > S2/d, m += c and pass B once more
//   pass C  y_i = gamma_i fma(x_i - m, r, -c r) + beta_i, prefetching a later
//           row (FwdRowToPrefetch: its DRAM reads then overlap this row's
//           arithmetic and writes)
//
// The mean is carried as m + c: once m is within a quarter sigma of the mean,
// c is a sum of deviations, so the error of x - mean is about d 2^-24 sigma
// whatever |mean|/sigma, and the one pass for both sums leaves two passes
// over the row instead of three. Rows not centred after two passes (|mean|
// /sigma beyond about 2^21, where a float centre cannot come within a
// quarter sigma), rows whose float sums overflow or come near underflow, and
// rows holding NaN or inf take the accurate float64 row
// (layernorm_fwd_accurate-inl.h), which meets a tighter bound and the NaN
// semantics. A constant row (tiny squares, then confirmed bit by bit) gets
// its value as the mean. The bound is derived in layernorm_fwd_hwy.cpp.
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

// Whether all n elements have the same bits (usually settled by the second).
template <typename T>
bool AllSameBits(const T* HWY_RESTRICT x, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    if (std::memcmp(x + i, x, sizeof(T)) != 0) return false;
  }
  return true;
}

// Per-lane sums of t_i = x_i - m and of t_i^2 over a chunk.
struct CentredLaneSums {
  LaneSums sum, squares;
};

// Pass B of the fast row on a chunk: CentredSumsChunk in float, per lane (the
// chunks' lane vectors are added before the one lane reduction per row).
template <typename T>
CentredLaneSums FastCentredChunk(const T* HWY_RESTRICT x, size_t n, float m) {
  const FloatTag<T> d;
  hn::Vec<decltype(d)> sum, squares;
  CentredSumsChunk(d, x, n, m, sum, squares);
  CentredLaneSums out;
  hn::Store(sum, d, out.sum.lane);
  hn::Store(squares, d, out.squares.lane);
  return out;
}

// Pass C on a chunk: y = gamma * fma(x - m, r, -c r) + beta; gamma/beta may
// be null. `prefetch` (may be null) is a later row's chunk
// (FwdRowToPrefetch), fetched meanwhile (FwdPrefetch). kValues:
// Values::no_input_nan when gamma and beta are finite (FastRow's x is), so
// that only an invalid operation can make a y NaN (r = inf on a constant row
// with eps 0: 0 * inf).
template <Values kValues, typename T>
void FastOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                     const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, float m,
                     float c, float r, bool stream, const T* prefetch) {
  const FloatTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const auto mean = hn::Set(d, m), shift = hn::Set(d, -(c * r)), scale = hn::Set(d, r);
  const bool prefetch_into_l1 = std::is_same_v<T, float> && stream;  // FwdPrefetch says why
  const auto xhat = [&](V v) NORMCHECK_INLINE_LAMBDA {
    return hn::MulAdd(hn::Sub(v, mean), scale, shift);
  };
  const auto xhat_pair = [&](size_t i, V& first, V& second) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, prefetch_into_l1);
    LoadWidenedPair(d, x + i, first, second);
    first = xhat(first), second = xhat(second);
  };
  const auto xhat_at = [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, prefetch_into_l1);
    return xhat(LoadAsFloatN(d, x + i, count));
  };
  if (!gamma && !beta) {
    WriteRowPairs<kValues>(d, y, n, stream, xhat_pair, xhat_at);
    return;
  }
  WriteRowPairs<kValues>(
      d, y, n, stream,
      [&](size_t i, V& first, V& second) NORMCHECK_INLINE_LAMBDA {
        xhat_pair(i, first, second);
        V g0 = hn::Set(d, 1.0f), g1 = g0, b0 = hn::Zero(d), b1 = b0;
        if (gamma) LoadFloatPair<T>(d, gamma + i, g0, g1);
        if (beta) LoadFloatPair<T>(d, beta + i, b0, b1);
        first = hn::MulAdd(g0, first, b0), second = hn::MulAdd(g1, second, b1);
      },
      [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
        const V g = gamma ? LoadAsFloatN(d, gamma + i, count) : hn::Set(d, 1.0f);
        const V b = beta ? LoadAsFloatN(d, beta + i, count) : hn::Zero(d);
        return hn::MulAdd(g, xhat_at(i, count), b);
      });
}

// One row of the fast kernel; kSplit spreads its chunks over the pool with the
// same result. mean/rstd may be null; a later row (FwdRowToPrefetch(ahead))
// is prefetched in pass C. kValues: Values::no_input_nan when gamma and beta
// are finite (FastOutputChunk).
template <bool kSplit, Values kValues = Values::any, typename T>
void FastRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
             const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, float* mean, float* rstd,
             int64_t cols, float eps, bool stream, RowsAhead<T> ahead) {
  const int64_t chunks = ceil_div(cols, kChunk);
  const FloatTag<T> df;
  const float d = static_cast<float>(cols);
  const size_t prefix = static_cast<size_t>(std::min<int64_t>(cols, kPrefixLength));
  float m = static_cast<float>(AccurateSumChunk(x, prefix) / static_cast<double>(prefix));
  float c = 0, squares = 0;  // the mean of t = x - m, the sum of t^2
  bool centred = false, finite = std::isfinite(m);
  for (int pass = 0; pass < 2 && finite && !centred; ++pass) {
    if (pass == 1) m += c;
    auto sum_lanes = hn::Zero(df), square_lanes = hn::Zero(df);
    fold_chunks<kSplit>(
        chunks,
        [&](int64_t ch) { return FastCentredChunk(x + ch * kChunk, chunk_length(cols, ch), m); },
        [&](const CentredLaneSums& part) {
          sum_lanes = hn::Add(sum_lanes, hn::Load(df, part.sum.lane));
          square_lanes = hn::Add(square_lanes, hn::Load(df, part.squares.lane));
        });
    const float sum = SumLanesPairwise(df, sum_lanes);
    squares = SumLanesPairwise(df, square_lanes);
    finite = std::isfinite(sum) && std::isfinite(squares);
    c = sum / d;
    centred = finite && CenteredEnough(c, squares / d);
  }
  // A constant row's prefix mean is its value (a float64 sum of equal floats
  // is exact), but a row of tiny deviations has tiny squares too: the bits
  // decide.
  if (finite && squares < 0x1p-80f * d && AllSameBits(x, cols)) {
    m = hn::GetLane(LoadAsFloatTail(df, x, 1));
    c = 0;
    squares = 0;
    centred = true;
  } else if (!finite || !centred || squares < 0x1p-80f * d) {
    // NaN/inf in the row, float overflow, no float centre near enough (see
    // the top of this file), or squares near underflow (>= 2^-80 d keeps
    // the loss below 2^-69 relative): the float64 row.
    AccurateRow<kSplit>(accurate_exact_below(cols, AccurateLanes()), x, gamma,
                        beta, y, mean, rstd, cols, eps, stream, ahead);
    return;
  }
  // S2/d >= c^2 in exact arithmetic (Cauchy-Schwarz); clamping a rounded
  // negative only moves var toward the true value (>= 0).
  const float var = std::max(0.0f, squares / d - c * c);
  const float r = 1.0f / std::sqrt(var + eps);
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    FastOutputChunk<kValues>(x + ch * kChunk, chunk_start(gamma, ch), chunk_start(beta, ch),
                             y + ch * kChunk, chunk_length(cols, ch), m, c, r, stream,
                             chunk_start(FwdRowToPrefetch(ahead), ch));
    // Non-temporal stores must be fenced before another thread reads y: once
    // per row (a fence per chunk cost 30% of a memory-bound call), or per
    // chunk when chunks are tasks that may end on different threads.
    if (kSplit && stream) hwy::FlushStream();
  });
  if (!kSplit && stream) hwy::FlushStream();
  if (mean) *mean = m + c;
  if (rstd) *rstd = r;
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_FWD_HWY_INL_H_
