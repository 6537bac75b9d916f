// reference_norm_linear (normcheck/reference_linear.h states the error).
#include "normcheck/reference_linear.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "normcheck/bounds.h"
#include "normcheck/double_double.h"

namespace normcheck {

NormLinearReference reference_norm_linear(Op op, std::span<const float> x, std::span<const float> gamma,
                                          std::span<const float> beta, std::span<const float> w,
                                          std::span<const float> bias, int64_t rows, int64_t cols,
                                          int64_t out_features, float eps) {
  if (!is_norm_linear(op)) throw std::invalid_argument("reference_norm_linear: not a norm-linear op");
  NormLinearReference ref;
  if (op == Op::layernorm_linear_fwd) {
    LayerNormFwdReference n = reference_layernorm_fwd(x, {}, {}, rows, cols, eps);
    ref.xhat = std::move(n.xhat);
    ref.stats = std::move(n.stats);
  } else {
    RmsNormFwdReference n = reference_rmsnorm_fwd(x, {}, rows, cols, eps);
    ref.xhat = std::move(n.xhat);
    ref.stats = std::move(n.stats);
  }
  const auto d = static_cast<std::size_t>(cols), e = static_cast<std::size_t>(out_features);
  const std::size_t outputs = static_cast<std::size_t>(rows) * e;
  ref.z.assign(outputs, 0.0);
  ref.exact_error.assign(outputs, 0.0);
  ref.t.assign(outputs, 0.0);
  ref.s.assign(outputs, 0.0);
  ref.c_abs.assign(outputs, 0.0);

  const double u53 = kUnitRoundoff64;
  const double g2d = gamma_n(2.0 * static_cast<double>(d) + 1, u53);
  const double gd = gamma_n(static_cast<double>(d) + 1, u53);
  // Per output: a = (W_i gamma, W_i), terms = (xhat, beta).
  std::vector<double> a(2 * d), terms(2 * d);
  for (std::size_t i = 0; i < e; ++i) {
    const float* wi = w.data() + i * d;
    const double b = bias.empty() ? 0.0 : static_cast<double>(bias[i]);
    for (std::size_t j = 0; j < d; ++j) {
      a[j] = static_cast<double>(wi[j]) * (gamma.empty() ? 1.0 : static_cast<double>(gamma[j]));
      a[d + j] = wi[j];
      terms[d + j] = beta.empty() ? 0.0 : static_cast<double>(beta[j]);
    }
    // c_i = sum_j W_ij beta_j + b_i, the same for every row.
    const DoubleDouble c = dot_dd(a.data() + d, terms.data() + d, static_cast<long>(d), 1, b);
    double sum_abs_wbeta = 0;
    for (std::size_t j = 0; j < d; ++j) sum_abs_wbeta += std::fabs(a[d + j] * terms[d + j]);
    const double c_abs = std::fabs(c.hi) + std::fabs(c.lo) + gd * gd * (sum_abs_wbeta + std::fabs(b));
    for (int64_t row = 0; row < rows; ++row) {
      const std::size_t k = static_cast<std::size_t>(row) * e + i;
      const double* xh = ref.xhat.exact.data() + static_cast<std::size_t>(row) * d;
      if (!ref.stats[static_cast<std::size_t>(row)].finite) {
        ref.z[k] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      double s = 0, t = std::fabs(b);
      for (std::size_t j = 0; j < d; ++j) {
        terms[j] = xh[j];
        const double p = std::fabs(a[j] * xh[j]);
        s += p;
        t += p + std::fabs(a[d + j] * terms[d + j]);
      }
      // T_i: |W_ij| (|gamma_j xhat_j| + |beta_j|) = |W_ij gamma_j xhat_j| + |W_ij beta_j|.
      const DoubleDouble zz = dot_dd(a.data(), terms.data(), static_cast<long>(2 * d), 1, b);
      ref.z[k] = zz.hi;
      ref.s[k] = s;
      ref.t[k] = t;
      ref.c_abs[k] = c_abs;
      ref.exact_error[k] = u53 * s * (1 + 2 * u53) + g2d * g2d * (2 * s + t) + std::fabs(zz.lo) +
                           4.0 * static_cast<double>(d) * 0x1p-1074;
    }
  }
  return ref;
}

}  // namespace normcheck
