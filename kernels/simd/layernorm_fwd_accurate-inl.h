// The accurate LayerNorm forward row, per target: float inputs, float64 math,
// the mean kept as m1 + c (a double and a small double correction) so that
// x - mean is accurate whatever |mean| / sigma. The error analysis is in
// docs/accuracy_accurate.md and above accurate_layernorm_fwd_bound in
// kernels/simd/layernorm_fwd_accurate.cpp.
//
//   pass A  s1 = sum x_i (float64, lane-parallel)        m1 = s1 / d
//   pass B  t_i = x_i - m1 (float64; exact when x_i is within a factor 2 of m1)
//           R = sum t_i compensated (TwoSum per lane, double-double merge)
//           Q = sum t_i^2 (float64)
//           c = R / d,  var = Q / d - c^2,  r = 1 / sqrt(var + eps)
//   pass C  y_i = fl32(gamma_i * (((x_i - m1) - c) * r) + beta_i), in float64
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

// A double-double running sum: hi + lo, with TwoSum's exact error of each
// addition to hi accumulated in lo.
struct CompensatedSum {
  double hi = 0, lo = 0;
  void add(double v) {
    const double sum = hi + v;
    const double v_part = sum - hi;
    lo += (hi - (sum - v_part)) + (v - v_part);
    hi = sum;
  }
};

struct DeviationSums {
  CompensatedSum sum;  // of t_i
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

// Pass B on one chunk: compensated sum of t_i = x_i - m1 and plain sum of t_i^2.
template <typename T>
DeviationSums AccurateDeviationChunk(const T* HWY_RESTRICT x, size_t n, double m1) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const auto mean = hn::Set(dd, m1);
  auto s0 = hn::Zero(dd), c0 = hn::Zero(dd), q0 = hn::Zero(dd);
  auto s1 = hn::Zero(dd), c1 = hn::Zero(dd), q1 = hn::Zero(dd);
  const auto accumulate = [&](auto& s, auto& c, auto& q, auto t) {
    const auto sum = hn::Add(s, t);
    const auto t_part = hn::Sub(sum, s);
    c = hn::Add(c, hn::Add(hn::Sub(s, hn::Sub(sum, t_part)), hn::Sub(t, t_part)));
    s = sum;
    q = hn::MulAdd(t, t, q);
  };
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    accumulate(s0, c0, q0, hn::Sub(hn::PromoteTo(dd, LoadAsFloat(df, x + i)), mean));
    accumulate(s1, c1, q1, hn::Sub(hn::PromoteTo(dd, LoadAsFloat(df, x + i + N)), mean));
  }
  for (; i + N <= n; i += N) {
    accumulate(s0, c0, q0, hn::Sub(hn::PromoteTo(dd, LoadAsFloat(df, x + i)), mean));
  }
  if (i < n) {  // the padding lanes would contribute -m1: zero them
    const auto t = hn::Sub(hn::PromoteTo(dd, LoadAsFloatTail(df, x + i, n - i)), mean);
    accumulate(s1, c1, q1, hn::IfThenElseZero(hn::FirstN(dd, n - i), t));
  }
  HWY_ALIGN double lanes[4][kMaxLanes];
  hn::Store(s0, dd, lanes[0]);
  hn::Store(s1, dd, lanes[1]);
  hn::Store(c0, dd, lanes[2]);
  hn::Store(c1, dd, lanes[3]);
  DeviationSums out;
  for (const auto& part : lanes) {
    for (size_t lane = 0; lane < N; ++lane) out.sum.add(part[lane]);
  }
  out.squares = SumLanesPairwise(dd, hn::Add(q0, q1));
  return out;
}

// Pass C on one chunk. gamma/beta may be null.
template <typename T>
void AccurateOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                         const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, double m1,
                         double c, double r, bool stream) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const auto mean_hi = hn::Set(dd, m1), mean_lo = hn::Set(dd, c), scale = hn::Set(dd, r);
  const auto load = [&](const auto* p, size_t i, size_t count) {
    return hn::PromoteTo(dd, count == N ? LoadAsFloat(df, p + i) : LoadAsFloatTail(df, p + i, count));
  };
  const auto xhat = [&](size_t i, size_t count) {
    return hn::Mul(hn::Sub(hn::Sub(load(x, i, count), mean_hi), mean_lo), scale);
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
// over the pool with the same result. mean/rstd may be null.
template <bool kSplit, typename T>
void AccurateRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                 const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, float* mean, float* rstd,
                 int64_t cols, float eps, bool stream) {
  const int64_t chunks = ceil_div(cols, kChunk);
  const auto length = [&](int64_t ch) {
    return static_cast<size_t>(std::min(kChunk, cols - ch * kChunk));
  };
  const auto at = [](const float* p, int64_t ch) { return p ? p + ch * kChunk : nullptr; };
  double s1 = 0;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return AccurateSumChunk(x + ch * kChunk, length(ch)); },
      [&](double part) { s1 += part; });
  const double d = static_cast<double>(cols);
  if (!std::isfinite(s1)) {
    // A finite float row cannot overflow a float64 sum, so the row holds NaN
    // or inf: mean in the extended reals, y and rstd NaN.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
      AccurateOutputChunk(x + ch * kChunk, at(gamma, ch), at(beta, ch), y + ch * kChunk, length(ch),
                          nan, 0, nan, false);
    });
    if (mean) *mean = static_cast<float>(s1 / d);
    if (rstd) *rstd = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const double m1 = s1 / d;
  CompensatedSum deviation;
  double squares = 0;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return AccurateDeviationChunk(x + ch * kChunk, length(ch), m1); },
      [&](const DeviationSums& part) {
        deviation.add(part.sum.hi);
        deviation.add(part.sum.lo);
        squares += part.squares;
      });
  const double c = (deviation.hi + deviation.lo) / d;
  // Q/d >= c^2 in exact arithmetic (Cauchy-Schwarz); clamping a rounded
  // negative only moves var toward the true value (>= 0).
  const double var = std::max(0.0, squares / d - c * c);
  const double r = 1.0 / std::sqrt(var + static_cast<double>(eps));
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    AccurateOutputChunk(x + ch * kChunk, at(gamma, ch), at(beta, ch), y + ch * kChunk, length(ch),
                        m1, c, r, stream);
    if (stream) hwy::FlushStream();
  });
  if (mean) *mean = static_cast<float>(m1 + c);
  if (rstd) *rstd = static_cast<float>(r);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
