// layernorm_fwd.accurate: LayerNorm forward whose error does not grow with
// |mean| / sigma: float64 math with the mean kept as m1 + c (see
// layernorm_fwd_accurate-inl.h for the algorithm, docs/accuracy_accurate.md
// for the proof that y is within 1 ULP of the exact result).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_accurate.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/layernorm_fwd_accurate-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdAccurate(const float* x, const float* gamma, const float* beta, float* y,
                          float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  for_each_layernorm_fwd_row(
      []<bool kSplit>(auto... row_args) { AccurateRow<kSplit>(row_args...); }, x, gamma, beta, y,
      mean, rstd, rows, cols, eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>

#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace simd {
HWY_EXPORT(LayerNormFwdAccurate);

void layernorm_fwd_accurate(const float* x, const float* gamma, const float* beta, float* y,
                            float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  if (rows <= 0 || cols <= 0) return;
  HWY_DYNAMIC_DISPATCH(LayerNormFwdAccurate)(x, gamma, beta, y, mean, rstd, rows, cols, eps);
}
}  // namespace simd

namespace {

// The a-priori bound (docs/accuracy_accurate.md has the full argument). U =
// 2^-53, u = 2^-24, gU(k) = gamma_k with U; nA = nB = summation_depth(d)
// (row_partition.h: 4 accumulators, pairwise lanes, chunks left to right) for
// the float64 sums of pass A and pass B. D = mu - m1, W = mean|x_i - m1|.
//  1. m1 = fl(fl(sum x)/d): |D| <= gU(nA + 1) mean|x|, so
//     a1 := |D| r <= gU(nA + 1) kappa, and W r <= sigma r + a1 <= 1 + a1.
//  2. t_i = fl(x_i - m1) = (x_i - m1)(1 + d_i), |d_i| <= U.
//  3. S1 = sum t_i (1 + th_i), |th_i| <= gU(nB); sum (x_i - m1) = d D, so
//     S1 = d D + E, |E| <= gU(nB + 1) d W; c = fl(S1/d):
//     |c - D| r <= gU(nB + 1)(1 + a1)(1 + U) + U a1 =: e_r, |c| r <= a1 + e_r.
//  4. S2 = sum t_i^2 (1 + th'), |th'| <= gU(nB + 1) (+1: a product without
//     FMA); sum (x_i - m1)^2 = d (sigma^2 + D^2); q = fl(S2/d) is off
//     sigma^2 + D^2 by gU(nB + 4). var^ = fl(q - fl(c^2)):
//     |var^ - sigma^2| r^2 <= b := b0 + U((1 - eps_share) + b0), where
//     b0 = gU(nB + 4)((1 - eps_share) + a1^2) + e_r (2 a1 + e_r) + U (a1 + e_r)^2
//     (|D^2 - c^2| = |D - c| |D + c|). Clamping at 0 only moves var^ toward
//     sigma^2 >= 0. + eps: b' = b + U (1 + b). r^ = fl(1/fl(sqrt)):
//     |r^/r - 1| <= rho := (1 + U)^2 / sqrt(1 - b') - 1.
//  5. v = fl(fl(t r^) - fl(c r^)) (an fma: the inner product exact):
//     t r^ - c r^ = r^ [(x - mu)(1 + d_i) + (D - c) + D d_i], so
//     |v - xhat| <= eta |xhat| + A with eta = (1 + rho)(1 + U)^3 - 1 and
//     A = (1 + rho)(1 + U)(e_r + gU(2) a1 + U (a1 + e_r)).
//  6. y = fl32(fl64(gamma v + beta)) (fma, or mul + add: gU(2)), the float
//     rounding u, or 2^-150 absolute if y is subnormal (underflow_abs;
//     float64 never underflows here): xhat_abs = A f, xhat_rel = eta f with
//     f = (1 + gU(2))(1 + u), affine_rel = u + gU(2)(1 + u).
// mean = fl32(fl64(m1 + c)): |m1 + c - mu| <= |c - D| <= (2.01 gU(nB + 1)(1 + U)
// + U gU(nA + 1)) mean|x| =: e_m (W <= mean|x| + |m1| <= 2.01 mean|x|), then
// U and u of the roundings; rstd = fl32(r^): rho + u (1 + rho).
Bound accurate_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double U = kUnitRoundoff64, u = kUnitRoundoff;
  const double nA = static_cast<double>(simd::summation_depth(c.d, simd::kMinLanes));
  const double nB = nA;
  const double a1 = gamma_n(nA + 1, U) * c.kappa;
  const double e_r = gamma_n(nB + 1, U) * (1 + a1) * (1 + U) + U * a1;
  const double b0 = gamma_n(nB + 4, U) * ((1 - c.eps_share) + a1 * a1) + e_r * (2 * a1 + e_r) +
                    U * (a1 + e_r) * (a1 + e_r);
  const double b = b0 + U * ((1 - c.eps_share) + b0);
  const double b1 = b + U * (1 + b);
  const double rho = b1 < 1 ? (1 + U) * (1 + U) / std::sqrt(1 - b1) - 1 : INFINITY;
  const double eta = (1 + rho) * (1 + U) * (1 + U) * (1 + U) - 1;
  const double A = (1 + rho) * (1 + U) * (e_r + gamma_n(2, U) * a1 + U * (a1 + e_r));
  const double final_rounding = (1 + gamma_n(2, U)) * (1 + u);
  const double e_m = 2.01 * gamma_n(nB + 1, U) * (1 + U) + U * gamma_n(nA + 1, U);
  Bound bound;
  bound.xhat_abs = A * final_rounding;
  bound.xhat_rel = eta * final_rounding;
  bound.affine_rel = u + gamma_n(2, U) * (1 + u);
  bound.mean_rel = u + (1 + u) * (e_m * (1 + U) + U);
  bound.stat_rel = rho + u * (1 + rho);
  bound.underflow_abs = kUnderflowUnit;
  return bound;
}

}  // namespace

extern const Kernel kLayerNormFwdAccurate;
constinit const Kernel kLayerNormFwdAccurate{
    .name = "layernorm_fwd.accurate",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway, float64 math: mean as m1 + c (c = mean of x - m1), variance "
                 "about m1 in the same pass, y = fma(x - m1, r, -c r) rounded once to float; threaded",
    .fn = &simd::layernorm_fwd_accurate,
    .bound = &accurate_layernorm_fwd_bound,
};

}  // namespace normcheck
#endif  // HWY_ONCE
