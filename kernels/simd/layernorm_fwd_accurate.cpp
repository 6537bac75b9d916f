// layernorm_fwd.accurate: LayerNorm forward within 1 ULP of the exact result
// whatever |mean| / sigma: float64 math with the mean kept as m + c, and the
// exact row sum for elements near the mean (see layernorm_fwd_accurate-inl.h
// for the algorithm, docs/accuracy_accurate.md for the proof).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/layernorm_fwd_accurate.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/hwy_bounds.h"
#include "simd/layernorm_fwd_accurate-inl.h"
#include "simd/row_driver.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

void LayerNormFwdAccurate(const float* x, const float* gamma, const float* beta, float* y,
                          float* mean, float* rstd, int64_t rows, int64_t cols, float eps) {
  const double exact_below = accurate_exact_below(cols, AccurateLanes());
  for_each_layernorm_fwd_row(
      [exact_below]<bool kSplit>(auto... row_args) { AccurateRow<kSplit>(exact_below, row_args...); },
      x, gamma, beta, y, mean, rstd, rows, cols, eps);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "bound_blocks.h"
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

// What the float64 tier of the row is off by: centred_twopass_error
// (kernels/bounds.cpp has the derivation; docs/accuracy_accurate.md the whole
// proof) with U = 2^-53 and n = summation_depth(d, lanes) (row_partition.h:
// 4 accumulators of `lanes` lanes, pairwise lanes, chunks left to right) for
// the sums of pass B.
CentredError accurate_error_terms(int64_t d, int64_t lanes, double eps_share) {
  return centred_twopass_error(static_cast<double>(simd::summation_depth(d, lanes)),
                               kUnitRoundoff64, eps_share);
}

// Below 2^-26 |xhat| before the last rounding: what makes y 1 ULP
// (docs/accuracy_accurate.md, "From 2^-26 to 1 ULP").
constexpr double kXhatRelative = 0x1p-26;

}  // namespace

// The bound of every element, with U, u = 2^-24 and the terms above for the
// fewest lanes of any target:
//  - elements with |v| >= accurate_exact_below have |xhat| >= T, so
//    |v - xhat| <= A + eta |xhat| <= 2^-26 |xhat|;
//  - the others are fl(fl(N)/d) r^ with N = d x - S within 2^-51.99
//    (ExactRowSum): relative (1 + 2^-51.99)(1 + U)^2 (1 + rho) - 1, far below
//    2^-26.
//  y = fl32(fl64(gamma v + beta)) (fma, or mul + add: gU(2)), the float
//  rounding u, or 2^-150 absolute if y is subnormal (underflow_abs; float64
//  never underflows here): xhat_rel = 2^-26 f with f = (1 + gU(2))(1 + u),
//  affine_rel = u + gU(2)(1 + u). mean: e_m, then the float64 sum and the
//  float rounding; rstd = fl32(r^): rho + u (1 + rho).
// The mean: |m + c - mu| <= e_m mean|x| (centred_mean_error).
Bound simd::accurate_layernorm_fwd_bound(const RowCondition& c) {
  constexpr double U = kUnitRoundoff64, u = kUnitRoundoff;
  const CentredError t = accurate_error_terms(c.d, simd::kMinLanes, c.eps_share);
  const double e_m = simd::centred_mean_error(t.e_sigma, c);
  const double final_rounding = (1 + gamma_n(2, U)) * (1 + u);
  Bound bound;
  bound.xhat_rel = kXhatRelative * final_rounding;
  bound.affine_rel = u + gamma_n(2, U) * (1 + u);
  bound.mean_rel = u + (1 + u) * (e_m * (1 + U) + U);
  bound.stat_rel = t.rho + u * (1 + t.rho);
  bound.underflow_abs = kUnderflowUnit;
  return bound;
}


// T = A / (2^-26 - eta) is where A + eta |xhat| = 2^-26 |xhat|; a computed
// |v| >= T (1 + eta) + A implies |xhat| >= (|v| - A) / (1 + eta) >= T. The
// terms take eps_share = 0, their largest.
double simd::accurate_exact_below(int64_t d, int64_t lanes) {
  const CentredError t = accurate_error_terms(d, lanes, 0);
  const double T = t.A / (kXhatRelative - t.eta);
  return T * (1 + t.eta) + t.A;
}

extern const Kernel kLayerNormFwdAccurate;
constinit const Kernel kLayerNormFwdAccurate{
    .name = "layernorm_fwd.accurate",
    .op = Op::layernorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "Highway, float64 math: mean as m + c (m a prefix mean, c = mean of x - m), "
                 "variance about m in the same pass, y = fma(x - m, r, -c r) rounded once to float; "
                 "elements near the mean from the exact row sum; threaded",
    .fn = &simd::layernorm_fwd_accurate,
    .bound = &simd::accurate_layernorm_fwd_bound,
    .ulp_promise = 1,  // docs/accuracy_accurate.md, "From 2^-26 to 1 ULP"
    .family = Family::highway,
};

}  // namespace normcheck
#endif  // HWY_ONCE
