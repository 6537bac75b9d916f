// The accurate LayerNorm forward row, per target: float inputs, float64 math,
// the mean kept as m + c (a double centre and a small double correction) so
// that x - mean is accurate whatever |mean| / sigma, and an exact tier for the
// elements so near the mean that float64 cannot promise 1 ULP. The error
// analysis is in docs/accuracy_accurate.md, above centred_twopass_error in
// kernels/bounds.cpp and above the bound in layernorm_fwd_accurate.cpp.
//
//   m       the float64 mean of the first kPrefixLength elements
//   pass B  t_i = x_i - m (float64), fused:
//           S1 = sum t_i,  S2 = sum t_i^2 (float64, lane-parallel)
//           c = S1 / d; if 16 c^2 > S2 / d (m was far from the mean, e.g. a
//           sorted row), m += c and pass B again
//           var = S2 / d - c^2,  r = 1 / sqrt(var + eps)
//   pass C  y_i = fl32(gamma_i * v_i + beta_i), v_i = fma(x_i - m, r, -c r),
//           in float64, noting the smallest |v_i|
//   exact   if some |v_i| < exact_below (2^-20.3 at d = 4096 with 4 lanes;
//           0.24% of the rows of a Gaussian 4096x4096 input):
//           the exact row sum S (ExactRowSum) and, for those elements,
//           y_i = fl32(gamma_i fl(fl(d x_i - S) / d) r + beta_i)
//
// With m within a quarter sigma of the mean, c is a sum of deviations (not
// of x): it puts the mean within about d 2^-53 sigma of the exact one
// whatever |mean|/sigma, and the variance about m loses nothing to
// cancellation. Every element with |v_i| >= exact_below is then within
// 2^-26 |xhat_i| before the last rounding, the rest are computed from the
// exact d x_i - S: y is within 1 ULP everywhere. The float<->double
// conversions are most of the cost (3 per element: one in pass B, two in C),
// so there are no other passes.
//
// Also the fallback of the fast Highway kernels for rows whose float32
// statistics overflow or underflow: float64 covers every float row.
#if defined(NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#undef NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#else
#define NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hwy/highway.h"
#include "simd/exact_row_sum.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// The float64 vectors of the accurate row: at most 4 lanes. On AVX-512 (AMD
// Zen 4 here) the 512-bit float<->double conversions cost more than two
// 256-bit ones: on 4096x4096 the row ran at 0.81-0.89 of the fast kernel's
// throughput with 8 lanes, 0.91-0.93 with 4 (interleaved runs).
using AccurateD = hn::CappedTag<double, 4>;

// The lanes of AccurateD on this target: accurate_exact_below's `lanes`.
inline size_t AccurateLanes() { return hn::Lanes(AccurateD()); }

// The first centre m is the mean of this many leading elements (fewer in a
// shorter row).
inline constexpr size_t kPrefixLength = 64;

// At most this many passes B per row: docs/accuracy_accurate.md shows that 2
// suffice for d <= 2^20 and 4 for every d < 2^40, so the cap only guards the
// loop.
inline constexpr int kMaxCentringPasses = 4;

struct DeviationSums {
  double sum = 0;      // of t_i = x_i - m
  double squares = 0;  // of t_i^2
};

// The float64 sum of n elements (the prefix that gives the first centre; the
// extended-real mean of a row holding NaN or inf).
template <typename T>
double AccurateSumChunk(const T* HWY_RESTRICT x, size_t n) {
  const AccurateD dd;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, LoadWidened(dd, x + i));
    a1 = hn::Add(a1, LoadWidened(dd, x + i + N));
    a2 = hn::Add(a2, LoadWidened(dd, x + i + 2 * N));
    a3 = hn::Add(a3, LoadWidened(dd, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, LoadWidened(dd, x + i));
  if (i < n) a0 = hn::Add(a0, LoadWidenedTail(dd, x + i, n - i));
  return SumLanesPairwise(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

// Pass B on one chunk, for the fast (float) and the accurate (float64) rows:
// the sums of t_i = x_i - m and of t_i^2 in d's lanes, each with 4
// accumulators (the summation order summation_depth assumes; elements reach
// them in T's pair order, LoadWidenedPair), into
// sum/squares per lane.
template <class D, typename T>
HWY_INLINE void CentredSumsChunk(D d, const T* HWY_RESTRICT x, size_t n, hn::TFromD<D> m,
                                 hn::Vec<D>& sum, hn::Vec<D>& squares) {
  const size_t N = hn::Lanes(d);
  const auto mean = hn::Set(d, m);
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  auto q0 = hn::Zero(d), q1 = hn::Zero(d), q2 = hn::Zero(d), q3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    hn::Vec<D> t0, t1, t2, t3;  // elements [i, i + 4N) in T's pair order
    LoadWidenedPair(d, x + i, t0, t1);
    LoadWidenedPair(d, x + i + 2 * N, t2, t3);
    t0 = hn::Sub(t0, mean), t1 = hn::Sub(t1, mean), t2 = hn::Sub(t2, mean), t3 = hn::Sub(t3, mean);
    s0 = hn::Add(s0, t0), s1 = hn::Add(s1, t1), s2 = hn::Add(s2, t2), s3 = hn::Add(s3, t3);
    q0 = hn::MulAdd(t0, t0, q0), q1 = hn::MulAdd(t1, t1, q1);
    q2 = hn::MulAdd(t2, t2, q2), q3 = hn::MulAdd(t3, t3, q3);
  }
  for (; i + N <= n; i += N) {
    const auto t = hn::Sub(LoadWidened(d, x + i), mean);
    s0 = hn::Add(s0, t), q0 = hn::MulAdd(t, t, q0);
  }
  if (i < n) {  // the padding lanes would contribute -m: zero them
    const auto t = hn::IfThenElseZero(hn::FirstN(d, n - i),
                                      hn::Sub(LoadWidenedTail(d, x + i, n - i), mean));
    s0 = hn::Add(s0, t), q0 = hn::MulAdd(t, t, q0);
  }
  sum = hn::Add(hn::Add(s0, s1), hn::Add(s2, s3));
  squares = hn::Add(hn::Add(q0, q1), hn::Add(q2, q3));
}

// Pass B of the accurate row on one chunk: CentredSumsChunk in float64, its
// lanes added.
template <typename T>
DeviationSums AccurateDeviationChunk(const T* HWY_RESTRICT x, size_t n, double m) {
  const AccurateD dd;
  hn::Vec<AccurateD> sum, squares;
  CentredSumsChunk(dd, x, n, m, sum, squares);
  DeviationSums out;
  out.sum = SumLanesPairwise(dd, sum);
  out.squares = SumLanesPairwise(dd, squares);
  return out;
}

// Pass C on one chunk: y = gamma * fma(x - m, r, -c r) + beta, rounded once
// to float; gamma/beta may be null. Returns a value below exact_below
// whenever some element's computed xhat, fma(x - m, r, -c r), is below it in
// magnitude (then the exact tier rescans the row). `prefetch` (may be null)
// is a later row's chunk (FwdRowToPrefetch), fetched into L2 meanwhile
// (FwdPrefetch).
//
// Two float64 vectors make one full float vector of AccurateD's float
// width, so y leaves in whole vector stores (non-temporal for large outputs).
template <typename T>
double AccurateOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                           const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, double m,
                           double c, double r, bool stream, const T* prefetch) {
  const AccurateD dd;
  const hn::Rebind<float, decltype(dd)> dh;  // as many floats as doubles
  const auto mean = hn::Set(dd, m), shift = hn::Set(dd, -(c * r)), scale = hn::Set(dd, r);
  // Elements [i, i + count) as float64 (count may be 0: zeros, no access).
  const auto load = [&](const auto* p, size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    return count ? hn::PromoteTo(dd, LoadAsFloatN(dh, p + i, count)) : hn::Zero(dd);
  };
  const auto xhat = [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    return hn::MulAdd(hn::Sub(load(x, i, count), mean), scale, shift);
  };
#if HWY_TARGET == HWY_SCALAR
  const auto& df = dh;  // one lane: nothing to combine
  const auto to_float = [&](size_t i, size_t count, const auto& value) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
    return hn::DemoteTo(dh, value(i, count));
  };
#else
  const hn::Twice<decltype(dh)> df;
  const size_t N = hn::Lanes(dd);
  const auto to_float = [&](size_t i, size_t count, const auto& value) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
    const size_t low = std::min(count, N);
    return hn::Combine(df, hn::DemoteTo(dh, value(i + N, count - low)), hn::DemoteTo(dh, value(i, low)));
  };
#endif
  // Padding lanes of a row's tail hold x = 0: at worst a false alarm.
  if (!gamma && !beta) {
    // y = fl32(xhat): |y| <= |xhat| (1 + 2^-24) for the |xhat| near exact_below
    // (normal floats), so min |y| (1 - 2^-23) is below exact_below when some
    // |xhat| is.
    auto smallest = hn::Set(df, std::numeric_limits<float>::infinity());
    WriteRow(df, y, n, stream, [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
      const auto out = to_float(i, count, xhat);
      smallest = hn::Min(smallest, hn::Abs(out));
      return out;
    });
    return static_cast<double>(hn::GetLane(hn::MinOfLanes(df, smallest))) * (1 - 0x1p-23);
  }
  auto smallest = hn::Set(dd, std::numeric_limits<double>::infinity());
  const auto one = hn::Set(dd, 1.0);
  const auto affine = [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    const auto v = xhat(i, count);
    smallest = hn::Min(smallest, hn::Abs(v));
    const auto g = gamma ? load(gamma, i, count) : one;
    const auto b = beta ? load(beta, i, count) : hn::Zero(dd);
    return hn::MulAdd(g, v, b);
  };
  WriteRow(df, y, n, stream, [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    return to_float(i, count, affine);
  });
  return hn::GetLane(hn::MinOfLanes(dd, smallest));
}

// The element x (row storage type) as a float.
template <typename T>
float ElementAsFloat(const T* HWY_RESTRICT x) {
  const hn::ScalableTag<float> df;
  return hn::GetLane(LoadAsFloatTail(df, x, 1));
}

// The row sum as two float64 sums, exact when `exact` (ExtractScalar of
// Rump, Ogita and Oishi, "Accurate floating-point summation, part I", 2008).
// With sigma = 2^k >= 2 d B (B >= max|x|): q = fl(fl(sigma + x) - sigma) is a
// multiple of G = 2^-53 sigma (fl(sigma + x) lies in [sigma/2, 2 sigma],
// Sterbenz makes the subtraction exact), and x - q, the rounding error of
// sigma + x, is a float64 number of magnitude <= G computed exactly. Every
// |q| <= B + G, so every partial sum of the q's is a multiple of G below
// d (B + G) < sigma = 2^53 G: exact, in any order. The remainders x - q are
// split the same way with sigma2 = 2^k2 >= 2 d G, and S = H1 + H2 exactly
// when no second remainder is left: when every element's ulp is at least
// 2^-52 sigma2 (elements within about 2^(81 - 2 log2(4d)) of the largest:
// 2^-55 at d = 4096). Otherwise `exact` is false.
struct SplitRowSum {
  double high = 0, low = 0;
  bool exact = true;
};

template <typename T>
SplitRowSum SplitSum(const T* HWY_RESTRICT x, size_t n, double max_abs_bound) {
  const AccurateD dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const int log2_2d = 64 - std::countl_zero(static_cast<uint64_t>(2 * n - 1));  // 2^log2_2d >= 2n
  const double sigma1 = std::ldexp(1.0, std::ilogb(max_abs_bound) + 1 + log2_2d);
  const double sigma2 = std::ldexp(sigma1, log2_2d - 53);
  const auto s1 = hn::Set(dd, sigma1), s2 = hn::Set(dd, sigma2);
  auto high = hn::Zero(dd), low = hn::Zero(dd), left = hn::Zero(dd);
  for (size_t i = 0; i < n; i += N) {
    const auto v = hn::PromoteTo(dd, LoadAsFloatN(df, x + i, std::min(N, n - i)));  // padding: 0
    const auto q1 = hn::Sub(hn::Add(s1, v), s1);
    const auto r1 = hn::Sub(v, q1);
    const auto q2 = hn::Sub(hn::Add(s2, r1), s2);
    high = hn::Add(high, q1);
    low = hn::Add(low, q2);
    left = hn::Max(left, hn::Abs(hn::Sub(r1, q2)));
  }
  SplitRowSum out;
  out.high = hn::GetLane(hn::SumOfLanes(dd, high));  // exact: partial sums of q's
  out.low = hn::GetLane(hn::SumOfLanes(dd, low));
  out.exact = hn::GetLane(hn::MaxOfLanes(dd, left)) == 0;
  return out;
}

// The n elements at x (y, gamma, beta likewise; gamma/beta may be null) of a
// row of cols elements whose exact sum `exact` holds: every element whose
// xhat computed as in pass C, fma(x - m, r, -c r), is below exact_below in
// magnitude gets y = gamma * fl(fl(d x - S) / d) r + beta instead.
template <typename T>
void FixNearMeanElements(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                         const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, size_t n, int64_t cols,
                         double m, double c, double r, double exact_below,
                         const ExactRowSum& exact) {
  const hn::ScalableTag<float> df;
  const double d = static_cast<double>(cols);
  for (size_t i = 0; i < n; ++i) {
    const float xi = ElementAsFloat(x + i);
    if (std::abs(std::fma(static_cast<double>(xi) - m, r, -(c * r))) >= exact_below) continue;
    const double xhat = exact.scaled_deviation(xi, cols) / d * r;
    const double g = gamma ? gamma[i] : 1.0, b = beta ? beta[i] : 0.0;
    StoreFromFloatTail(df, hn::Set(df, static_cast<float>(std::fma(g, xhat, b))), y + i, 1);
  }
}

// The exact tier over a row of cols elements (max_abs_bound >= max|x|): the
// exact row sum (from SplitSum, or element by element when it is not exact),
// then a vector scan for the elements whose computed |xhat| is below
// exact_below, fixed by FixNearMeanElements.
template <typename T>
void AccurateExactTier(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                       const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, int64_t cols, double m,
                       double c, double r, double exact_below, double max_abs_bound) {
  const AccurateD dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd), n = static_cast<size_t>(cols);
  ExactRowSum exact;
  const SplitRowSum split = SplitSum(x, n, max_abs_bound);
  if (split.exact) {
    exact.add(split.high);
    exact.add(split.low);
  } else {
    for (size_t i = 0; i < n; ++i) exact.add(ElementAsFloat(x + i));
  }
  const auto mean = hn::Set(dd, m), shift = hn::Set(dd, -(c * r)), scale = hn::Set(dd, r);
  const auto below = hn::Set(dd, exact_below);
  for (size_t i = 0; i < n; i += N) {
    const size_t count = std::min(N, n - i);
    const auto v = hn::MulAdd(hn::Sub(hn::PromoteTo(dd, LoadAsFloatN(df, x + i, count)), mean), scale, shift);
    if (hn::AllFalse(dd, hn::Lt(hn::Abs(v), below))) continue;
    FixNearMeanElements(x + i, gamma ? gamma + i : nullptr, beta ? beta + i : nullptr, y + i, count,
                        cols, m, c, r, exact_below, exact);
  }
}

// Whether the statistics about m can be kept: the correction c is small
// against the spread about m, 16 c^2 <= S2 / d, which bounds |m - mean| by
// 0.26 sigma (docs/accuracy_accurate.md, step 1). Otherwise the pass is
// repeated about m + c.
inline bool CenteredEnough(double c, double mean_square) { return 16 * (c * c) <= mean_square; }

// One row (cols elements) of the accurate kernel; kSplit spreads its chunks
// over the pool with the same result. mean/rstd may be null; a later row
// (FwdRowToPrefetch(ahead)) is prefetched in pass C.
// exact_below is accurate_exact_below(cols, AccurateLanes()):
// elements whose computed |xhat| is smaller go through the exact tier.
template <bool kSplit, typename T>
void AccurateRow(double exact_below, const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                 const float* HWY_RESTRICT beta, T* HWY_RESTRICT y, float* mean, float* rstd,
                 int64_t cols, float eps, bool stream, RowsAhead<T> ahead) {
  const int64_t chunks = ceil_div(cols, kChunk);
  const double d = static_cast<double>(cols);
  // Pass C over the row; returns the smallest computed |xhat|.
  const auto output = [&](double m, double c, double r) {
    double smallest = std::numeric_limits<double>::infinity();
    fold_chunks<kSplit>(
        chunks,
        [&](int64_t ch) {
          const double chunk_smallest = AccurateOutputChunk(
              x + ch * kChunk, chunk_start(gamma, ch), chunk_start(beta, ch), y + ch * kChunk,
              chunk_length(cols, ch), m, c, r, stream,
              chunk_start(FwdRowToPrefetch(ahead), ch));
          if (kSplit && stream) hwy::FlushStream();  // this chunk's task may end on another thread
          return chunk_smallest;
        },
        [&](double chunk_smallest) { smallest = std::min(smallest, chunk_smallest); });
    if (!kSplit && stream) hwy::FlushStream();
    return smallest;
  };
  // The first centre: the mean of a short prefix, usually within a fraction
  // of sigma of the row's mean (rows where it is not take one more pass).
  const size_t prefix = static_cast<size_t>(std::min<int64_t>(cols, kPrefixLength));
  double m = AccurateSumChunk(x, prefix) / static_cast<double>(prefix);
  DeviationSums sums;
  for (int pass = 0;; ++pass) {
    sums = {};
    if (std::isfinite(m)) {
      fold_chunks<kSplit>(
          chunks,
          [&](int64_t ch) {
            return AccurateDeviationChunk(x + ch * kChunk, chunk_length(cols, ch), m);
          },
          [&](const DeviationSums& part) {
            sums.sum += part.sum;
            sums.squares += part.squares;
          });
    }
    if (!std::isfinite(m) || !std::isfinite(sums.sum) || !std::isfinite(sums.squares)) {
      // A finite float row keeps every float64 sum here finite, so the row
      // holds NaN or inf: mean in the extended reals, y and rstd NaN.
      double s = 0;
      fold_chunks<kSplit>(
          chunks, [&](int64_t ch) { return AccurateSumChunk(x + ch * kChunk, chunk_length(cols, ch)); },
          [&](double part) { s += part; });
      const double nan = std::numeric_limits<double>::quiet_NaN();
      output(nan, 0, nan);
      if (mean) *mean = static_cast<float>(s / d);
      if (rstd) *rstd = std::numeric_limits<float>::quiet_NaN();
      return;
    }
    const double c = sums.sum / d;
    if (CenteredEnough(c, sums.squares / d) || pass == kMaxCentringPasses - 1) break;
    m += c;
  }
  const double c = sums.sum / d;
  // S2/d >= c^2 in exact arithmetic (Cauchy-Schwarz); clamping a rounded
  // negative only moves var toward the true value (>= 0).
  const double var = std::max(0.0, sums.squares / d - c * c);
  const double r = 1.0 / std::sqrt(var + static_cast<double>(eps));
  const double smallest = output(m, c, r);
  if (mean) *mean = static_cast<float>(m + c);
  if (rstd) *rstd = static_cast<float>(r);
  // The exact tier, for the rare row with an element near its mean (after
  // the non-temporal stores are fenced). Not needed where every deviation is
  // 0 (a constant row: y is exactly beta, or NaN for r = inf) or r is not
  // finite (eps = 0 on a constant row).
  if (smallest >= exact_below || sums.squares == 0 || !std::isfinite(r)) return;
  // max|x| <= |m| + max|x_i - m|, and max (x_i - m)^2 <= S2 up to S2's
  // relative error (below 2^-20) and the rounding of each t_i: 1.001 covers
  // both and the roundings of this line.
  const double max_abs_bound = 1.001 * (std::abs(m) + std::sqrt(sums.squares));
  AccurateExactTier(x, gamma, beta, y, cols, m, c, r, exact_below, max_abs_bound);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_LAYERNORM_FWD_ACCURATE_INL_H_
