// RMSNorm forward, y = gamma * x * rrms, rrms = 1/sqrt(mean(x^2) + eps), over
// the whole float range: the row is scaled by a power of two 2^-e (exact) so
// that the largest of max|x| and sqrt(eps) lands in [1, 2) before squaring;
// squares then cannot overflow (the sum stays below 4d) and the largest
// cannot underflow. The cost is one extra pass for max|x|.
#include <algorithm>
#include <cmath>
#include <limits>

#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {

// Error bound (docs/accuracy_backward.md, section RMSNorm forward).
//
// With z = x 2^-e and eps_z = eps 2^-2e (exact, barring underflow),
// rrms = 2^-e / sqrt(Q), Q = mean(z^2) + eps_z, and xhat_i = x_i rrms = z_i / sqrt(Q).
// Every summand of q = fl(fl(sum fl(z_j^2)) / d + eps_z) carries at most d + 2
// factors (1 + delta) (square, d - 1 additions, the division, the eps addition)
// and all summands are >= 0, so (1 - u)^(d+2) <= q / Q <= (1 + u)^(d+2).
// rz = fl(1 / fl(sqrt(q))) adds two factors, so
//   rz sqrt(Q) in [(1 - u)(1 + u)^-(d+4)/2, (1 + u)(1 - u)^-(d+4)/2],
// and (1 - u)^-m <= 1 + gamma_m (m >= 1), (1 + u)(1 + gamma_m) <= 1 + gamma_{m+1},
// (1 + u)^-m >= 1 - m u give |rz sqrt(Q) - 1| <= S = gamma_{(d+6)/2}: the square
// root halves the d of the sum of squares.
// Underflow in the scaled row: z_j or z_j^2 or eps_z below 0x1p-126 is off by
// at most 0x1p-150 absolute; the mean divides the sum's d such errors by d,
// so q is off by at most 0x1p-148 absolute while Q >= (1 - 2u)/d (the largest
// of |z_j| and sqrt(eps_z) is at least 1 - u): a relative tau = d 0x1p-147,
// and S' = S + tau (1 + S). Then rrms = 2^-e rz is exact while it is a normal
// float, off by 0x1p-150 absolute when subnormal (|x| near FLT_MAX):
//   stat_rel = S', underflow_abs >= 0x1p-150.
// y_i = fl(gamma_i fl(z_i rz)): xhat_rel = (1 + S')(1 + u)^2 - 1, affine_rel = 0;
// a subnormal z_i (0x1p-150 times rz <= sqrt(d / (1 - 2u)) (1 + S')) and a
// subnormal z_i rz (0x1p-150) give xhat_abs; a subnormal y costs 0x1p-150 more.
Bound rmsnorm_fwd_bound(const RowCondition& c) {
  constexpr double u = kUnitRoundoff;
  constexpr double tiny = 0x1p-150;
  const double d = static_cast<double>(c.d);
  const double s = gamma_n((d + 6) / 2);
  const double tau = d * 0x1p-147;
  const double s_total = s + tau * (1 + s);
  Bound b;
  b.stat_rel = s_total;
  b.xhat_rel = (1 + s_total) * (1 + u) * (1 + u) - 1;
  b.xhat_abs = (std::sqrt(d / (1 - 2 * u)) * (1 + s_total) * (1 + u) + 1) * tiny;
  b.underflow_abs = tiny;
  return b;
}

namespace {

void rmsnorm_fwd_scalar(const float* x, const float* gamma, float* y, float* rrms, int64_t rows,
                        int64_t cols, float eps) {
  const float d = static_cast<float>(cols);
  const float sqrt_eps = std::sqrt(eps);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float max_abs = 0.0f;
    bool finite = true;
    for (int64_t j = 0; j < cols; ++j) {
      finite = finite && std::isfinite(xr[j]);
      max_abs = std::max(max_abs, std::fabs(xr[j]));
    }
    if (!finite) {  // docs/semantics.md: a non-finite row gives NaN everywhere
      std::fill(yr, yr + cols, std::numeric_limits<float>::quiet_NaN());
      if (rrms) rrms[r] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const float scale_ref = std::max(max_abs, sqrt_eps);
    const int e = scale_ref > 0.0f ? std::ilogb(scale_ref) : 0;
    float sum_sq = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      const float z = std::ldexp(xr[j], -e);
      sum_sq += z * z;
    }
    // Zero row with eps = 0: q = 0, rz = +inf and xhat = 0 * inf = NaN, as the
    // definition gives in the extended reals.
    const float q = sum_sq / d + std::ldexp(eps, -2 * e);
    const float rz = 1.0f / std::sqrt(q);
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = std::ldexp(xr[j], -e) * rz;
      yr[j] = gamma ? gamma[j] * xhat : xhat;
    }
    if (rrms) rrms[r] = std::ldexp(rz, -e);
  }
}

}  // namespace

extern const Kernel kRmsNormFwdScalar;
constinit const Kernel kRmsNormFwdScalar{
    .name = "rmsnorm_fwd.scalar",
    .op = Op::rmsnorm_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "scale the row by 2^-e (max(max|x|, sqrt(eps)) in [1,2)), sequential sum of "
                 "squares, rz = 1/sqrt(sum/d + eps*2^-2e), y = gamma*(x*2^-e)*rz, rrms = rz*2^-e",
    .fn = &rmsnorm_fwd_scalar,
    .bound = &rmsnorm_fwd_bound,
};

}  // namespace normcheck
