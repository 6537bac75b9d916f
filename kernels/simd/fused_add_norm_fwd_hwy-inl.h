// The fused residual add in front of a forward norm, per target: the rows of
// a version-2 call (plugin.h: nc_call, each tensor at its own row stride) in
// float32, bf16 or f16 storage of x, residual, residual_out and y; weight,
// beta, mean and rstd (rrms) float32.
//
//   pass 0  residual_out_i = fl_T(fl32(x_i + residual_i))  (stored in cache)
//   then    the norm's own row (RmsRow, FastRow) on residual_out as its x
//
// The norm reads the sum it stores, rounded to T, and nothing else: the spec's
// rounding point round=sum:T (docs/ops.md; for float32 storage sum:f32). So
// the next layer, which reads residual_out, sees the very values this norm
// normalized, as with vLLM's fused_add_rms_norm, and the norm's row is the
// plain kernel's, with that kernel's bound on its input. Pass 0 stores
// residual_out through the cache (no stream): the row reads it back at once.
// The weight is the caller's (gamma, or fl32(1 + gamma) formed once per call).
// Each row is computed by the same chunked passes whatever the number of rows
// or threads (row_driver.h), so a row's outputs do not depend on its batch.
#if defined(NORMCHECK_SIMD_FUSED_ADD_NORM_FWD_HWY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_FUSED_ADD_NORM_FWD_HWY_INL_H_
#undef NORMCHECK_SIMD_FUSED_ADD_NORM_FWD_HWY_INL_H_
#else
#define NORMCHECK_SIMD_FUSED_ADD_NORM_FWD_HWY_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "normcheck/plugin.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// Pass 0 on a chunk of n elements: sum = x + residual in float32, stored in
// T. The tail's lanes beyond n are neither read nor written (LoadAsFloatN,
// WriteRowPairs' tail store).
template <typename T>
void FusedSumChunk(const T* HWY_RESTRICT x, const T* HWY_RESTRICT residual, T* HWY_RESTRICT sum,
                   size_t n) {
  const FloatTag<T> d;
  using V = hn::Vec<decltype(d)>;
  WriteRowPairs(
      d, sum, n, /*stream=*/false,
      [&](size_t i, V& first, V& second) NORMCHECK_INLINE_LAMBDA {
        V r0, r1;
        LoadWidenedPair(d, x + i, first, second);
        LoadWidenedPair(d, residual + i, r0, r1);
        first = hn::Add(first, r0), second = hn::Add(second, r1);
      },
      [&](size_t i, size_t count) NORMCHECK_INLINE_LAMBDA {
        return hn::Add(LoadAsFloatN(d, x + i, count), LoadAsFloatN(d, residual + i, count));
      });
}

// The typed element pointer of a tensor's row r (null when the call does not
// pass the tensor).
template <typename T>
HWY_INLINE T* RowOf(const nc_tensor& t, int64_t r) {
  return t.data ? static_cast<T*>(t.data) + r * t.row_stride : nullptr;
}

// Every row of call `c` on storage T: pass 0 into residual_out, then
// norm_row.template operator()<kSplit>(sum, y, mean_slot, stat_slot, stream)
// with the row's residual_out as the norm's input. A non-finite weight or
// beta touches only its own column of y, as the plain rows' (docs/semantics.md).
template <typename T, class NormRow>
void FusedAddRows(const nc_call& c, const NormRow& norm_row) {
  const int64_t rows = c.rows, cols = c.cols;
  const int64_t chunks = ceil_div(cols, kChunk);
  const bool stream = streams_output(rows, cols, sizeof(T));
  for_each_row(rows, cols, [&]<bool kSplit>(int64_t r) {
    const T* x = RowOf<const T>(c.x, r);
    const T* residual = RowOf<const T>(c.residual, r);
    T* sum = RowOf<T>(c.residual_out, r);
    for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
      FusedSumChunk(x + ch * kChunk, residual + ch * kChunk, sum + ch * kChunk,
                    chunk_length(cols, ch));
    });
    T* y = RowOf<T>(c.y, r);
    float* mean = RowOf<float>(c.mean, r);
    float* rstd = RowOf<float>(c.rstd, r);
    norm_row.template operator()<kSplit>(sum, y, mean, rstd, stream);
  });
}

// Calls f.template operator()<T>() with T the storage type of x (the spec
// gives x, residual, y and residual_out one format).
template <class F>
HWY_INLINE void WithStorage(int32_t dtype, const F& f) {
  if (dtype == NC_F32) return f.template operator()<float>();
  WithStorage16(dtype == NC_BF16 ? DType::bf16 : DType::f16, f);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_FUSED_ADD_NORM_FWD_HWY_INL_H_
