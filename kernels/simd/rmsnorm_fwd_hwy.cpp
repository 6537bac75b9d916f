// rmsnorm_fwd.hwy: RMSNorm forward, float32 in/out, Highway SIMD dispatched at
// run time, threaded over rows (or chunks of a few long rows). float64 math:
// the squares of floats are exact in float64 and their sum can neither
// overflow nor underflow, so every finite row is handled.
//   pass 1  ss = sum x_i^2 (float64, 4 accumulators)   r = 1/sqrt(ss/d + eps)
//   pass 2  y_i = fl32((x_i r) gamma_i) in float64
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/rmsnorm_fwd_hwy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <limits>

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

double RmsSquaresChunk(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  auto a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  const auto square = [&](auto& acc, auto xv) {
    const auto v = hn::PromoteTo(dd, xv);
    acc = hn::MulAdd(v, v, acc);
  };
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    square(a0, hn::LoadU(df, x + i));
    square(a1, hn::LoadU(df, x + i + N));
    square(a2, hn::LoadU(df, x + i + 2 * N));
    square(a3, hn::LoadU(df, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) square(a0, hn::LoadU(df, x + i));
  if (i < n) square(a0, LoadAsFloatTail(df, x + i, n - i));  // zero padding adds 0
  return SumLanesPairwise(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
}

void RmsOutputChunk(const float* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                    float* HWY_RESTRICT y, size_t n, double r) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const size_t N = hn::Lanes(dd);
  const auto scale = hn::Set(dd, r);
  const auto out = [&](size_t i, size_t count) {
    auto v = hn::Mul(hn::PromoteTo(dd, LoadAsFloatN(df, x + i, count)), scale);
    if (gamma) v = hn::Mul(v, hn::PromoteTo(dd, LoadAsFloatN(df, gamma + i, count)));
    return hn::DemoteTo(df, v);
  };
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(out(i, N), df, y + i);
  if (i < n) StoreFromFloatTail(df, out(i, n - i), y + i, n - i);
}

template <bool kSplit>
void RmsRow(const float* x, const float* gamma, float* y, float* rrms, int64_t cols, float eps) {
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
  for_each_chunk<kSplit>(chunks, [&](int64_t ch) {
    RmsOutputChunk(x + ch * kChunk, chunk_start(gamma, ch), y + ch * kChunk,
                   chunk_length(cols, ch), r);
  });
  if (rrms) *rrms = static_cast<float>(r);
}

void RmsNormFwdHwy(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                   int64_t cols, float eps) {
  for_each_row(rows, cols, [&]<bool kSplit>(int64_t r) {
    RmsRow<kSplit>(x + r * cols, gamma, y + r * cols, rrms ? rrms + r : nullptr, cols, eps);
  });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(RmsNormFwdHwy);

void rmsnorm_fwd_hwy(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                     int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(RmsNormFwdHwy)(x, gamma, y, rrms, rows, cols, eps);
}

// U = 2^-53, u = 2^-24, gU(k) = gamma_k with U, n = summation_depth(d).
//   x_i^2 is exact in float64 (48 significant bits), so ss^ = sum x^2 (1 + th(n));
//   / d and + eps round once each (both terms positive): w = (ms + eps)(1 + th(n+2)).
//   r64 = fl(1/fl(sqrt w)): |r64/r - 1| <= (1 - gU(n+2))^-1/2 (1 + U)^2 - 1 =: rho.
//   y = fl32(fl64(fl64(x r64) gamma)): xhat64 = x r64 (1 + U) off by
//   (1 + rho)(1 + U) - 1 relative, times gamma (1 + U), rounded to float (u,
//   or 2^-150 absolute if y is subnormal).
//   rrms = fl32(r64): rho + u (1 + rho).
Bound hwy_rmsnorm_fwd_bound(const RowCondition& c) {
  constexpr double U = kUnitRoundoff64, u = kUnitRoundoff;
  const double n = static_cast<double>(summation_depth(c.d, kMinLanes));
  const double rho = (1 + U) * (1 + U) / std::sqrt(1 - gamma_n(n + 2, U)) - 1;
  Bound b;
  b.xhat_rel = ((1 + rho) * (1 + U) * (1 + U) - 1) * (1 + u);
  b.affine_rel = u;
  b.stat_rel = rho + u * (1 + rho);
  b.underflow_abs = kUnderflowUnit;
  return b;
}
}  // namespace simd

extern const Kernel kRmsNormFwdHwy;
constinit const Kernel kRmsNormFwdHwy{
    .name = "rmsnorm_fwd.hwy",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway SIMD (run-time dispatch): float64 sum of squares, y = x r gamma in "
                 "float64 rounded once; threaded over rows or chunks",
    .fn = &simd::rmsnorm_fwd_hwy,
    .bound = &simd::hwy_rmsnorm_fwd_bound,
};

}  // namespace normcheck
#endif  // HWY_ONCE
