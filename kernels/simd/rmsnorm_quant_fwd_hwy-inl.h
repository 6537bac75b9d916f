// The RMSNorm forward with y written as 8-bit codes, per target: 16-bit x,
// float32 gamma and rrms, y's codes (e4m3fn or int8) and, for a per-token
// scale, one float32 scale per row; rows at any stride (version-2 calls).
//   pass 1  ss = sum x_i^2, r = 1/sqrt(ss/d + eps): rmsnorm_fwd.hwy_bf16's pass 1
//           (RmsSquaresChunk, the same chunks in the same order)
//   y_i     = fl32(fl32(x_i fl32(r)) gamma_i) in float32 where r is a normal
//           float, else fl32((x_i r) gamma_i) in float64: rmsnorm_fwd.hwy_bf16's
//           y before its rounding to bf16 (RmsRow), the same operations
//   pass 2  (scale=token) a = max |y_i|, then in float32
//           s = max(fl32(min(a, scale_ub) / qmax), scale_min), written
//   pass 3  t_i = fl32(y_i inv), inv = fl32(1 / s) (s the row's or the static
//           scale), q_i = the code of t_i (quant_cast-inl.h)
// Pass 2 and 3 compute y_i by one function (QuantY), so the a that sets the
// scale is the largest |y_i| of the very values that are cast. y_i and t_i
// are products only, each multiply rounded to nearest, and s one division:
// no addition follows a product for a fused multiply-add to absorb (the
// cast's additions act on |t| after a clamp), so the values are the declared
// arithmetic bit for bit on every target (the tests compare them with a
// scalar evaluation of the same formulas).
// a is taken as the largest of the float bits of |y_i| as unsigned integers,
// which orders non-negative floats as their values and puts NaN above inf: a
// row with a NaN y (a NaN or inf x, a NaN gamma) gets a NaN a, hence a NaN
// scale and NaN codes (e4m3: S.1111.111; int8: 0), whatever the lane order.
#if defined(NORMCHECK_SIMD_RMSNORM_QUANT_FWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_RMSNORM_QUANT_FWD_HWY_INL_H_
#undef NORMCHECK_SIMD_RMSNORM_QUANT_FWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_RMSNORM_QUANT_FWD_HWY_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "normcheck/plugin.h"
#include "simd/hwy_io-inl.h"
#include "simd/quant_cast-inl.h"
#include "simd/rmsnorm_fwd_hwy-inl.h"
#include "simd/rmsnorm_quant.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// A row's r, as the two forms QuantY multiplies by.
struct RowR {
  double r64;       // 1/sqrt(ss/d + eps) in float64
  float r32;        // fl32(r64)
  bool float_math;  // r64 is a normal float: y in float32 (RmsRow's test)
};

// y for the `count` (<= Lanes(d)) elements at x (gamma: null for weight 1);
// the lanes from count on are zero. kFloatMath: r.float_math, a template
// parameter so that the choice is made once per chunk.
template <bool kFloatMath, class D, typename T>
HWY_INLINE hn::Vec<D> QuantY(D d, const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma, size_t count,
                             const RowR& r) {
  if constexpr (kFloatMath) {
    const auto v = hn::Mul(LoadAsFloatN(d, x, count), hn::Set(d, r.r32));
    return gamma ? hn::Mul(v, LoadAsFloatN(d, gamma, count)) : v;
  }
  // RmsOutputChunk's float64 pass, one element at a time (r beyond the
  // normal floats: rows of tiny or huge x, NaN rows)
  HWY_ALIGN float xs[kMaxLanes], gs[kMaxLanes], ys[kMaxLanes] = {};
  hn::Store(LoadAsFloatN(d, x, count), d, xs);
  if (gamma) hn::Store(LoadAsFloatN(d, gamma, count), d, gs);
  for (size_t k = 0; k < count; ++k) {
    double v = static_cast<double>(xs[k]) * r.r64;
    if (gamma) v *= static_cast<double>(gs[k]);
    ys[k] = static_cast<float>(v);
  }
  return hn::Load(d, ys);
}

// Pass 2 on a chunk of n elements: the largest float bits of |y_i| (see the
// file's comment for NaN).
template <bool kFloatMath, typename T>
uint32_t AbsMaxBitsChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma, size_t n, const RowR& r) {
  const FloatTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const size_t N = hn::Lanes(d);
  const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
  auto acc = hn::Zero(du);
  size_t i = 0;
  for (; i + N <= n; i += N)
    acc = hn::Max(acc, hn::And(hn::BitCast(du, QuantY<kFloatMath>(d, x + i, gamma ? gamma + i : nullptr, N, r)), magnitude));
  if (i < n)  // the lanes past the row are zero: they do not raise the largest
    acc = hn::Max(acc, hn::And(hn::BitCast(du, QuantY<kFloatMath>(d, x + i, gamma ? gamma + i : nullptr, n - i, r)), magnitude));
  return hn::GetLane(hn::MaxOfLanes(du, acc));
}

// Pass 3 on a chunk of n elements: q_i = code(fl32(y_i inv)). `prefetch`
// (may be null) is a later row's chunk (FwdRowToPrefetch), fetched meanwhile
// as RmsRow's pass 2 does, so that its pass 1 finds it in cache.
template <QuantFormat kFormat, bool kFloatMath, typename T>
void CodesChunk(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma, uint8_t* HWY_RESTRICT q, size_t n,
                const RowR& r, float inv, const T* prefetch) {
  const FloatTag<T> d;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d);
  const auto vinv = hn::Set(d, inv);
  const auto codes = [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
    if (prefetch) FwdPrefetch(prefetch + i, /*into_l1=*/false);
    const auto t = hn::Mul(QuantY<kFloatMath>(d, x + i, gamma ? gamma + i : nullptr, count, r), vinv);
    if constexpr (kFormat == QuantFormat::e4m3) {
      return hn::TruncateTo(d8, CastToE4m3(d, t));
    } else {
      return hn::TruncateTo(d8, CastToInt8(d, t));
    }
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(codes(i, N), d8, q + i);
  if (i < n) {
    HWY_ALIGN uint8_t tail[kMaxLanes];
    hn::Store(codes(i, n - i), d8, tail);
    std::memcpy(q + i, tail, n - i);
  }
}

// The scale of a dynamic row from a, the largest |y_i|: in float32,
// s = max(fl32(min(a, scale_ub) / qmax), scale_min); NaN for a NaN a.
inline float DynamicScale(float a, const QuantRowParams& p) {
  if (std::isnan(a)) return a;
  return std::max(std::min(a, p.scale_ub) / p.qmax, p.scale_min);
}

// One row (x, gamma, the codes q, the slots of rrms and the row's scale; a
// slot may be null), split over the pool with kSplit (bit-identical); `next`
// (null for none) is prefetched in pass 3.
template <bool kSplit, QuantFormat kFormat, typename T>
void QuantRow(const T* x, const float* gamma, uint8_t* q, float* rrms, float* scale, int64_t cols, float eps,
              const QuantRowParams& p, const T* next) {
  const int64_t chunks = ceil_div(cols, kChunk);
  double squares = 0;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return RmsSquaresChunk(x + ch * kChunk, chunk_length(cols, ch)); },
      [&](double part) { squares += part; });
  // RmsRow's r and its choice of float32 math
  RowR r;
  r.r64 = std::isfinite(squares) ? 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps)
                                 : std::numeric_limits<double>::quiet_NaN();
  r.r32 = static_cast<float>(r.r64);
  r.float_math = r.r64 >= 0x1p-126 && r.r64 < 0x1p127;
  float inv = p.inv;
  if (p.dynamic) {
    uint32_t largest = 0;
    fold_chunks<kSplit>(
        chunks,
        [&](int64_t ch) {
          const T* x_ch = x + ch * kChunk;
          const float* gamma_ch = chunk_start(gamma, ch);
          const size_t n = chunk_length(cols, ch);
          return r.float_math ? AbsMaxBitsChunk<true>(x_ch, gamma_ch, n, r) : AbsMaxBitsChunk<false>(x_ch, gamma_ch, n, r);
        },
        [&](uint32_t part) { largest = std::max(largest, part); });
    float a;
    std::memcpy(&a, &largest, sizeof a);
    const float s = DynamicScale(a, p);
    inv = 1.0f / s;
    if (scale) *scale = s;
  }
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    const T* x_ch = x + ch * kChunk;
    const float* gamma_ch = chunk_start(gamma, ch);
    uint8_t* q_ch = q + ch * kChunk;
    const size_t n = chunk_length(cols, ch);
    if (r.float_math) {
      CodesChunk<kFormat, true>(x_ch, gamma_ch, q_ch, n, r, inv, chunk_start(next, ch));
    } else {
      CodesChunk<kFormat, false>(x_ch, gamma_ch, q_ch, n, r, inv, chunk_start(next, ch));
    }
  });
  if (rrms) *rrms = r.r32;
}

// Every row of call `c` (x in 16-bit storage T, y's codes one byte each).
template <QuantFormat kFormat, typename T>
void QuantRows(const nc_call& c, const float* gamma, const QuantRowParams& p) {
  const auto* x = static_cast<const T*>(c.x.data);
  auto* q = static_cast<uint8_t*>(c.y.data);
  auto* rrms = static_cast<float*>(c.rstd.data);
  auto* scale = p.dynamic ? static_cast<float*>(c.scale.data) : nullptr;
  for_each_row(c.rows, c.cols, [&]<bool kSplit>(int64_t r) {
    RowsAhead<T> ahead;  // rows_ahead's rows, at the call's stride
    if (!kSplit && r + 1 < c.rows) ahead.next = x + (r + 1) * c.x.row_stride;
    if (!kSplit && r + 2 < c.rows) ahead.after_next = x + (r + 2) * c.x.row_stride;
    QuantRow<kSplit, kFormat>(x + r * c.x.row_stride, gamma, q + r * c.y.row_stride,
                              rrms ? rrms + r * c.rstd.row_stride : nullptr,
                              scale ? scale + r * c.scale.row_stride : nullptr, c.cols, c.eps, p,
                              FwdRowToPrefetch(ahead));
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_RMSNORM_QUANT_FWD_HWY_INL_H_
