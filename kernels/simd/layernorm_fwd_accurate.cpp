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
  const bool stream = rows * cols * int64_t{sizeof(float)} >= kStreamOutputBytes;
  const auto row = [&]<bool kSplit>(int64_t r) {
    AccurateRow<kSplit>(x + r * cols, gamma, beta, y + r * cols, mean ? mean + r : nullptr,
                        rstd ? rstd + r : nullptr, cols, eps, stream);
  };
  for_each_row(
      rows, cols, [&](int64_t r) { row.template operator()<false>(r); },
      [&](int64_t r) { row.template operator()<true>(r); });
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
// 2^-53, u = 2^-24, gU(n) = gamma_n with U; depths from row_partition.h:
// nA for the float64 sum of pass A, nB for pass B's sums (2 accumulators:
// twice the depth of 4), nM for every addition of the compensated sum
// (lanes, up to 34 merged values per chunk).
//  1. m1 = s1/d: |m1 - mu| r <= (gU(nA) + U) kappa =: a1, and
//     T = mean|x_i - m1| satisfies T r <= sigma r + a1 <= 1 + a1.
//  2. t_i = (x_i - m1)(1 + d_i), |d_i| <= U (0 when x_i is within 2x of m1).
//  3. The compensated sum R^ of the t_i: every TwoSum error is exact, only
//     their plain sums round, so |R^ - sum t_i| <= 3 gU(nM)^2 sum|t_i|; with
//     c = R^/d (two roundings) the mean m1 + c is off by
//     e r <= (6U + 4 gU(nM)^2)(1 + a1) =: e_r.
//  4. (x_i - m1) - c = (x_i - mu)(1 + U') + a_i with |a_i| r <= e_r + U a1
//     =: A0 (the first subtraction's rounding hits |x_i - mu| + |mu - m1|).
//  5. var^ = Q/d - c^2 against var: with D = mu - m1, D r <= a1,
//     |var^ - var| r^2 <= gU(nB+6)((1 - eps_share) + 2 a1^2)
//                          + (1 + U)(2 a1 e_r + e_r^2) =: b,
//     plus U for + eps: b' = b + U (1 + b). r^ = 1/sqrt: two more roundings:
//     |r^/r - 1| <= (1 - b')^-1/2 (1 + U)^2 - 1 =: rho.
//  6. xhat64 = fl(((x - m1) - c) r^): |xhat64 - xhat| <= eta |xhat| + A0 (1 + eta),
//     eta = (1 + U)^3 (1 + rho) - 1.
//  7. y = fl32(fl64(gamma xhat64 + beta)): the float64 fma (or mul + add)
//     costs gU(2) of |gamma xhat| + |beta|, the final rounding u of it, or
//     2^-150 absolute if y is subnormal (half the subnormal spacing:
//     underflow_abs; float64 itself never underflows here).
// mean = fl32(fl64(m1 + c)): u + U + e/mean|x| with T <= 2.01 mean|x|;
// rstd = fl32(r^): rho + u (1 + rho).
Bound accurate_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double U = kUnitRoundoff64, u = kUnitRoundoff;
  const double d = static_cast<double>(c.d);
  const double nA = static_cast<double>(simd::summation_depth(c.d, simd::kMinLanes));
  const double nB = 2.0 * static_cast<double>(simd::summation_depth(c.d, simd::kMinLanes));
  const double nM = nB + 34 * std::ceil(d / static_cast<double>(simd::kChunk));
  const double gM = gamma_n(nM, U);
  const double a1 = (gamma_n(nA, U) + U) * c.kappa;
  const double e_r = (6 * U + 4 * gM * gM) * (1 + a1);
  const double A0 = e_r + U * a1;
  const double b = gamma_n(nB + 6, U) * ((1 - c.eps_share) + 2 * a1 * a1) +
                   (1 + U) * (2 * a1 * e_r + e_r * e_r);
  const double b1 = b + U * (1 + b);
  const double rho = b1 < 1 ? (1 + U) * (1 + U) / std::sqrt(1 - b1) - 1 : INFINITY;
  const double eta = (1 + U) * (1 + U) * (1 + U) * (1 + rho) - 1;
  const double final_rounding = (1 + gamma_n(2, U)) * (1 + u);
  Bound bound;
  bound.xhat_abs = A0 * (1 + eta) * final_rounding;
  bound.xhat_rel = eta * final_rounding;
  bound.affine_rel = u + gamma_n(2, U) * (1 + u);
  bound.mean_rel = u + U + 2.01 * (6 * U + 4 * gM * gM);
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
    .algorithm = "Highway, float64 math: mean as m1 + c (compensated sum of x - m1), "
                 "variance about m1, y rounded once to float; threaded",
    .fn = &simd::layernorm_fwd_accurate,
    .bound = &accurate_layernorm_fwd_bound,
};

}  // namespace normcheck
#endif  // HWY_ONCE
