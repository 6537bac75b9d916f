// The RMSNorm forward row, per target, for float32 or 16-bit storage of x and
// y (gamma and rrms stay float32). The squares of floats (and so of bf16/f16
// values, which float32 holds exactly) are exact in float64 and their sum can
// neither overflow nor underflow, so every finite row is handled.
//   pass 1  ss = sum x_i^2 (float64, 4 accumulators)   r = 1/sqrt(ss/d + eps)
//   pass 2  float32 storage: y_i = fl32((x_i r) gamma_i) in float64
//           16-bit storage: y_i = fl32(fl32(x_i fl32(r)) gamma_i) in float32
//           when r is a normal float (else as for float32 storage), then
//           rounded to nearest even in the storage format
// A row with NaN or inf gets NaN y and rrms. The bounds are derived in
// rmsnorm_fwd_hwy.cpp (float32) and rmsnorm_fwd_hwy16.cpp (16-bit): the
// float32 pass 2 adds about 2^-23 relative to a 16-bit y's 2^-8 or 2^-11
// rounding.
#if defined(NORMCHECK_SIMD_RMSNORM_FWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_RMSNORM_FWD_HWY_INL_H_
#undef NORMCHECK_SIMD_RMSNORM_FWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_RMSNORM_FWD_HWY_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// The float64 vectors of the row on storage T. On AVX-512 (AMD Zen 4 here) a
// 512-bit float<->double conversion costs more than two 256-bit ones: float32
// rows take at most 4 lanes, and pass 2 joins two results into one 8-float
// store (one thread: 0.80 of the 8-lane time on 4096x4096 and 256x65536; two
// threads: 0.82 to 0.89; alternating runs). 16-bit rows keep full width: with
// 4 lanes their loads and stores shrink to 64 bits, and they ran 1.15 to 1.3
// times as long. Any lane count meets the bound (summation_depth assumes one
// lane).
template <typename T>
using RmsD = std::conditional_t<std::is_same_v<T, float>, hn::CappedTag<double, 4>,
                                hn::ScalableTag<double>>;

// Pass 1 on a chunk: the float64 sum of x_i^2 in 4 accumulators (elements
// reach them in T's pair order, LoadWidenedPair), lanes added pairwise.
template <typename T>
double RmsSquaresChunk(const T* HWY_RESTRICT x, size_t n) {
  const RmsD<T> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  const auto square = [&](auto& acc, auto xv) {
    const auto v = hn::PromoteTo(dd, xv);
    acc = hn::MulAdd(v, v, acc);
  };
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    hn::Vec<decltype(df)> v0, v1, v2, v3;  // elements [i, i + 4N) in T's pair order
    LoadWidenedPair(df, x + i, v0, v1);
    LoadWidenedPair(df, x + i + 2 * N, v2, v3);
    square(a0, v0), square(a1, v1), square(a2, v2), square(a3, v3);
  }
  for (; i + N <= n; i += N) square(a0, LoadAsFloat(df, x + i));
  if (i < n) square(a0, LoadAsFloatTail(df, x + i, n - i));  // zero padding adds 0
  return SumLanesPairwise(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

// Pass 2 on a chunk. `stream` writes y around the cache (WriteRow);
// `prefetch` (may be null) is a later row's chunk (FwdRowToPrefetch), fetched
// meanwhile (FwdPrefetch).
template <typename T>
void RmsOutputChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma, T* HWY_RESTRICT y,
                    size_t n, double r, bool stream, const T* prefetch) {
  const RmsD<T> dd;
  const hn::Rebind<float, decltype(dd)> dh;
  const auto scale = hn::Set(dd, r);
  // Elements [i, i + count) of y (count may be 0: zeros, no access).
  const auto scaled = [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    if (!count) return hn::Zero(dh);
    auto v = hn::Mul(hn::PromoteTo(dd, LoadAsFloatN(dh, x + i, count)), scale);
    if (gamma) v = hn::Mul(v, hn::PromoteTo(dd, LoadAsFloatN(dh, gamma + i, count)));
    return hn::DemoteTo(dh, v);
  };
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to join
  if constexpr (std::is_same_v<T, float>) {
    const hn::Twice<decltype(dh)> df;
    const size_t N = hn::Lanes(dd);
    WriteRow(df, y, n, stream, [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
      if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
      const size_t low = std::min(count, N);
      return hn::Combine(df, scaled(i + N, count - low), scaled(i, low));
    });
    return;
  }
#endif
  WriteRow(dh, y, n, stream, [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
    return scaled(i, count);
  });
}

// Pass 2 of a 16-bit row in float32: y = fl32(fl32(x r) gamma), r a normal
// float. `stream` and `prefetch` as in RmsOutputChunk. kValues:
// Values::no_input_nan when gamma is finite (x is: the row's sum was).
template <Values kValues, typename T>
void RmsOutputChunkFloat(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                         T* HWY_RESTRICT y, size_t n, float r, bool stream, const T* prefetch) {
  const FloatTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const auto scale = hn::Set(d, r);
  WriteRowPairs<kValues>(
      d, y, n, stream,
      [&](size_t i, V& first, V& second) NORMCHECK_INLINE_LAMBDA {
        if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
        LoadWidenedPair(d, x + i, first, second);
        first = hn::Mul(first, scale), second = hn::Mul(second, scale);
        if (!gamma) return;
        V g0, g1;
        LoadFloatPair<T>(d, gamma + i, g0, g1);
        first = hn::Mul(first, g0), second = hn::Mul(second, g1);
      },
      [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
        if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
        const auto v = hn::Mul(LoadAsFloatN(d, x + i, count), scale);
        return gamma ? hn::Mul(v, LoadAsFloatN(d, gamma + i, count)) : v;
      });
}

// One row; `next` (FwdRowToPrefetch; null for none or a split row) is
// prefetched in pass 2.
// kValues: Values::no_input_nan when gamma is finite (RmsOutputChunkFloat).
template <bool kSplit, Values kValues, typename T>
void RmsRow(const T* x, const float* gamma, T* y, float* rrms, int64_t cols, float eps,
            bool stream, const T* next) {
  const int64_t chunks = ceil_div(cols, kChunk);
  double squares = 0;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return RmsSquaresChunk(x + ch * kChunk, chunk_length(cols, ch)); },
      [&](double part) { squares += part; });
  // Finite floats cannot overflow the float64 sum: a non-finite one means NaN
  // or inf in the row, whose y and rrms are NaN.
  const double r = std::isfinite(squares)
                       ? 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps)
                       : std::numeric_limits<double>::quiet_NaN();
  // 16-bit rows take float32 math where r is a normal float: fl32(r) is then
  // within 2^-24 relative and no product overflows (|x r| <= sqrt(d)); NaN
  // fails the test.
  const bool float_math = r >= 0x1p-126 && r < 0x1p127;
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    const T* x_ch = x + ch * kChunk;
    const float* gamma_ch = chunk_start(gamma, ch);
    T* y_ch = y + ch * kChunk;
    const size_t n = chunk_length(cols, ch);
    if constexpr (std::is_same_v<T, float>) {
      RmsOutputChunk(x_ch, gamma_ch, y_ch, n, r, stream, chunk_start(next, ch));
    } else if (float_math) {
      RmsOutputChunkFloat<kValues>(x_ch, gamma_ch, y_ch, n, static_cast<float>(r), stream,
                                   chunk_start(next, ch));
    } else {
      RmsOutputChunk(x_ch, gamma_ch, y_ch, n, r, stream, chunk_start(next, ch));
    }
    if (kSplit && stream) hwy::FlushStream();  // this chunk's task may end on another thread
  });
  if (!kSplit && stream) hwy::FlushStream();  // once per row (layernorm_fwd_hwy-inl.h)
  if (rrms) *rrms = static_cast<float>(r);
}

// The whole RMSNorm forward, threaded over rows or the chunks of long rows.
template <typename T>
void RmsNormFwdRows(const T* x, const float* gamma, T* y, float* rrms, int64_t rows, int64_t cols,
                    float eps) {
  const bool stream = streams_output(rows, cols, sizeof(T));
  // A row taking the float32 pass has a finite x (its sum was) and a normal
  // 1/rms: an input NaN can reach y only through gamma.
  const auto finite = [&] { return AllFinite(gamma, static_cast<size_t>(cols)); };
  WithValues<T>(finite, [&]<Values kValues>() {
    for_each_row(rows, cols, [&]<bool kSplit>(int64_t r) {
      RmsRow<kSplit, kValues>(x + r * cols, gamma, y + r * cols, rrms ? rrms + r : nullptr, cols,
                              eps, stream, FwdRowToPrefetch(rows_ahead<kSplit>(x, r, rows, cols)));
    });
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_RMSNORM_FWD_HWY_INL_H_
