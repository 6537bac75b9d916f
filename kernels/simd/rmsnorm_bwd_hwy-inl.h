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
#include <limits>

#include "hwy/highway.h"
#include "simd/bwd_blocks-inl.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

template <typename T>
float RmsBwdSumChunk(const BwdChunk<T>& c, float rrms) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto r = hn::Set(d, rrms), one = hn::Set(d, 1.0f);
  auto b0 = hn::Zero(d), b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
  const auto step = [&](auto& b, size_t i, size_t count) {
    const auto dy = LoadAsFloatN(d, c.dy + i, count);
    const auto xhat = hn::Mul(LoadAsFloatN(d, c.x + i, count), r);
    const auto gamma = c.gamma ? LoadAsFloatN(d, c.gamma + i, count) : one;
    b = hn::MulAdd(hn::Mul(gamma, dy), xhat, b);  // padding: dy = 0, x = 0
    if (c.dgamma_part) {
      UpdateFloatsN(d, c.dgamma_part + i, count,
                    [&](auto sum) { return hn::MulAdd(dy, xhat, sum); });
    }
  };
  size_t i = 0;
  for (; i + 4 * N <= c.n; i += 4 * N) {
    step(b0, i, N);
    step(b1, i + N, N);
    step(b2, i + 2 * N, N);
    step(b3, i + 3 * N, N);
  }
  for (; i + N <= c.n; i += N) step(b0, i, N);
  if (i < c.n) step(b0, i, c.n - i);
  return SumLanesPairwise(d, hn::Add(hn::Add(b0, b1), hn::Add(b2, b3)));
}

template <typename T>
void RmsBwdDxChunk(const BwdChunk<T>& c, float rrms, float B) {
  const hn::ScalableTag<float> d;
  const auto r = hn::Set(d, rrms), vb = hn::Set(d, B), one = hn::Set(d, 1.0f);
  const auto dx_of = [&](size_t i, size_t count) {
    const auto dy = LoadAsFloatN(d, c.dy + i, count);
    const auto xhat = hn::Mul(LoadAsFloatN(d, c.x + i, count), r);
    const auto gamma = c.gamma ? LoadAsFloatN(d, c.gamma + i, count) : one;
    return hn::Mul(r, hn::NegMulAdd(xhat, vb, hn::Mul(gamma, dy)));
  };
  WriteRow(d, c.dx, c.n, c.stream, [&](size_t i, size_t count) {
    PrefetchNext(c, i);
    return dx_of(i, count);
  });
}

// One backward row (row r of `rows`), adding into the block's dgamma_part.
template <bool kSplit, typename T>
void RmsBwdRow(const BwdRows<T>& rows, int64_t r, const float* gamma, float rrms,
               float* dgamma_part) {
  const int64_t cols = rows.cols, chunks = ceil_div(cols, kChunk);
  const T* dy = rows.dy + r * cols;
  const T* x = rows.x + r * cols;
  T* dx = rows.dx + r * cols;
  const T* next_dy = rows.template next<kSplit>(rows.dy, r);
  const T* next_x = rows.template next<kSplit>(rows.x, r);
  const bool stream = rows.stream();
  const auto chunk = [&](int64_t ch) {
    return BwdChunk<T>{chunk_start(dy, ch),     chunk_start(x, ch),
                       chunk_start(gamma, ch),  chunk_start(dgamma_part, ch),
                       nullptr,                 chunk_start(dx, ch),
                       chunk_length(cols, ch),  chunk_start(next_dy, ch),
                       chunk_start(next_x, ch), stream};
  };
  float sum = 0;
  fold_chunks<kSplit>(
      chunks, [&](int64_t ch) { return RmsBwdSumChunk(chunk(ch), rrms); },
      [&](float part) { sum += part; });
  const float B = std::isfinite(sum) ? sum / static_cast<float>(cols)
                                     : std::numeric_limits<float>::quiet_NaN();
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    RmsBwdDxChunk(chunk(ch), rrms, B);
    if (kSplit && stream) hwy::FlushStream();  // this chunk's task may end on another thread
  });
  if (!kSplit && stream) hwy::FlushStream();  // once per row (layernorm_fwd_hwy-inl.h)
}

// The whole RMSNorm backward (row blocks: bwd_blocks-inl.h).
template <typename T>
void RmsNormBwdRows(const T* dy, const T* x, const float* gamma, const float* rrms, T* dx,
                    float* dgamma, int64_t rows, int64_t cols) {
  const BwdRows<T> all{dy, x, dx, rows, cols};
  BackwardInRowBlocks(rows, cols, dgamma, nullptr,
                      [&]<bool kSplit>(int64_t r, float* dgamma_part, float*) {
                        RmsBwdRow<kSplit>(all, r, gamma, rrms[r], dgamma_part);
                      });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_RMSNORM_BWD_HWY_INL_H_
