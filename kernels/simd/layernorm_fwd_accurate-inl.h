// The accurate LayerNorm forward row, per target: float inputs, float64 math,
// the mean kept as m1 + c (a double and a small double correction) so that
// x - mean is accurate whatever |mean| / sigma. The error analysis is in
// docs/accuracy_accurate.md and above accurate_layernorm_fwd_bound in
// kernels/simd/layernorm_fwd_accurate.cpp.
//
//   pass A  s = sum x_i (float64, lane-parallel)          m1 = s / d
//   pass B  t_i = x_i - m1 (float64), fused:
//           S1 = sum t_i,  S2 = sum t_i^2 (float64, lane-parallel)
//           c = S1 / d,  var = S2 / d - c^2,  r = 1 / sqrt(var + eps)
//   pass C  y_i = fl32(gamma_i * fma(x_i - m1, r, -c r) + beta_i), in float64
//
// m1 is already within about d 2^-53 |mean|, so c is tiny, the variance
// about m1 loses nothing to cancellation, and c (a sum of deviations, not of
// x) puts the mean within about d 2^-53 sigma whatever |mean|/sigma: with a
// plain sum (no TwoSum) y is within 1 ULP for |y| >= about 2^-19 (d 4096).
// The float<->double conversions are most of the cost (4 per element: one
// each in passes A and B, two in C), so there are no other passes.
//
// Also the fallback of the fast Highway kernels for rows whose float32
// statistics overflow or underflow: float64 covers every float row.
#if defined(NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#undef NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#else
#define NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <limits>

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

struct DeviationSums {
  double sum = 0;      // of t_i = x_i - m1
  double squares = 0;  // of t_i^2
};

// Pass A on one chunk: the float64 sum of n elements.
template <typename T>
double AccurateSumChunk(const T* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::PromoteTo(dd, LoadAsFloat(df, x + i)));
    a1 = hn::Add(a1, hn::PromoteTo(dd, LoadAsFloat(df, x + i + N)));
    a2 = hn::Add(a2, hn::PromoteTo(dd, LoadAsFloat(df, x + i + 2 * N)));
    a3 = hn::Add(a3, hn::PromoteTo(dd, LoadAsFloat(df, x + i + 3 * N)));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, hn::PromoteTo(dd, LoadAsFloat(df, x + i)));
  if (i < n) a0 = hn::Add(a0, hn::PromoteTo(dd, LoadAsFloatTail(df, x + i, n - i)));
  return SumLanesPairwise(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

// Pass B on one chunk: the sums of t_i = x_i - m1 and of t_i^2, each with 4
// accumulators (the summation order summation_depth assumes).
template <typename T>
DeviationSums AccurateDeviationChunk(const T* HWY_RESTRICT x, size_t n, double m1) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const auto mean = hn::Set(dd, m1);
  auto s0 = hn::Zero(dd), s1 = hn::Zero(dd), s2 = hn::Zero(dd), s3 = hn::Zero(dd);
  auto q0 = hn::Zero(dd), q1 = hn::Zero(dd), q2 = hn::Zero(dd), q3 = hn::Zero(dd);
  const auto deviation = [&](size_t i) { return hn::Sub(hn::PromoteTo(dd, LoadAsFloat(df, x + i)), mean); };
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto t0 = deviation(i), t1 = deviation(i + N), t2 = deviation(i + 2 * N),
               t3 = deviation(i + 3 * N);
    s0 = hn::Add(s0, t0), s1 = hn::Add(s1, t1), s2 = hn::Add(s2, t2), s3 = hn::Add(s3, t3);
    q0 = hn::MulAdd(t0, t0, q0), q1 = hn::MulAdd(t1, t1, q1);
    q2 = hn::MulAdd(t2, t2, q2), q3 = hn::MulAdd(t3, t3, q3);
  }
  for (; i + N <= n; i += N) {
    const auto t = deviation(i);
    s0 = hn::Add(s0, t), q0 = hn::MulAdd(t, t, q0);
  }
  if (i < n) {  // the padding lanes would contribute -m1: zero them
    const auto t = hn::IfThenElseZero(
        hn::FirstN(dd, n - i), hn::Sub(hn::PromoteTo(dd, LoadAsFloatTail(df, x + i, n - i)), mean));
    s0 = hn::Add(s0, t), q0 = hn::MulAdd(t, t, q0);
  }
  DeviationSums out;
  out.sum = SumLanesPairwise(dd, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3)));
  out.squares = SumLanesPairwise(dd, hn::Add(hn::Add(q0, q1), hn::Add(q2, q3)));
  return out;
}

// Pass C on one chunk: y = gamma * fma(x - m1, r, -c r) + beta, rounded once
// to float; gamma/beta may be null. `prefetch` (may be null) is the next
// row's chunk, fetched while this one computes.
template <typename T>
void AccurateOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                         const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, double m1,
                         double c, double r, bool stream, const T* prefetch) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const auto mean = hn::Set(dd, m1), shift = hn::Set(dd, -(c * r)), scale = hn::Set(dd, r);
  const auto load = [&](const auto* p, size_t i, size_t count) {
    return hn::PromoteTo(dd, LoadAsFloatN(df, p + i, count));
  };
  const auto xhat = [&](size_t i, size_t count) {
    if (prefetch) hwy::Prefetch(prefetch + i);
    return hn::MulAdd(hn::Sub(load(x, i, count), mean), scale, shift);
  };
  if (!gamma && !beta) {
    WriteRow(df, y, n, stream, [&](size_t i, size_t count) { return hn::DemoteTo(df, xhat(i, count)); });
    return;
  }
  const auto one = hn::Set(dd, 1.0), zero = hn::Zero(dd);
  WriteRow(df, y, n, stream, [&](size_t i, size_t count) {
    const auto g = gamma ? load(gamma, i, count) : one;
    const auto b = beta ? load(beta, i, count) : zero;
    return hn::DemoteTo(df, hn::MulAdd(g, xhat(i, count), b));
  });
}

// One row (cols elements) of the accurate kernel; kSplit spreads its chunks
// over the pool with the same result. mean/rstd/next_row may be null;
// next_row (the row computed after this one) is prefetched in pass C.
template <bool kSplit, typename T>
void AccurateRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                 const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, float* mean, float* rstd,
                 int64_t cols, float eps, bool stream, const T* next_row) {
  const int64_t chunks = ceil_div(cols, kChunk);
  double s = 0;
  fold_chunks<kSplit>(
      chunks,
      [&](int64_t ch) { return AccurateSumChunk(x + ch * kChunk, chunk_length(cols, ch)); },
      [&](double part) { s += part; });
  const double d = static_cast<double>(cols);
  const auto output = [&](double m1, double c, double r) {
    for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
      AccurateOutputChunk(x + ch * kChunk, chunk_start(gamma, ch), chunk_start(beta, ch),
                          y + ch * kChunk, chunk_length(cols, ch), m1, c, r, stream,
                          chunk_start(next_row, ch));
      if (kSplit && stream) hwy::FlushStream();  // this chunk's task may end on another thread
    });
    if (!kSplit && stream) hwy::FlushStream();
  };
  if (!std::isfinite(s)) {
    // A finite float row cannot overflow a float64 sum, so the row holds NaN
    // or inf: mean in the extended reals, y and rstd NaN.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    output(nan, 0, nan);
    if (mean) *mean = static_cast<float>(s / d);
    if (rstd) *rstd = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const double m1 = s / d;
  DeviationSums sums;
  fold_chunks<kSplit>(
      chunks,
      [&](int64_t ch) {
        return AccurateDeviationChunk(x + ch * kChunk, chunk_length(cols, ch), m1);
      },
      [&](const DeviationSums& part) {
        sums.sum += part.sum;
        sums.squares += part.squares;
      });
  const double c = sums.sum / d;
  // S2/d >= c^2 in exact arithmetic (Cauchy-Schwarz); clamping a rounded
  // negative only moves var toward the true value (>= 0).
  const double var = std::max(0.0, sums.squares / d - c * c);
  const double r = 1.0 / std::sqrt(var + static_cast<double>(eps));
  output(m1, c, r);
  if (mean) *mean = static_cast<float>(m1 + c);
  if (rstd) *rstd = static_cast<float>(r);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
