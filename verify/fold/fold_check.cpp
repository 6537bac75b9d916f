// The bounds (derivation in docs/folding.md, "Error bound"). With u = 2^-24,
// eta = 2^-150 (half float32's subnormal gap: what an underflowing product
// loses), gamma_n = n u / (1 - n u), u_s, eta_s the storage format's unit
// roundoff and half subnormal gap (round.h), A_j = |gamma_j xhat_j| + |beta_j|,
// and chi = 1 with storage activations (0 otherwise):
//   unfolded: the activation a_j is within alpha A_j + eta_a of gamma_j xhat_j + beta_j,
//     alpha = gamma_2 (float32 activations) or u_s + gamma_2 (1 + u_s) (rounded to storage),
//     eta_a = eta (1 + u) or eta_s + 2 eta; the dot product of d terms and the
//     bias adds gamma_(d+1) of the magnitudes, and d eta (1 + gamma_d) for underflow:
//   E_u = (alpha + gamma_(d+1)(1 + alpha)) sum_j |W_ij| A_j + gamma_(d+1) |b_i|
//         + eta_a (1 + gamma_(d+1)) sum_j |W_ij| + d eta (1 + gamma_d);
//   folded: W'_ij = W_ij gamma_j (1 + delta) + zeta and xhat~_j = xhat_j (1 + delta')
//     + zeta' (chi = 1; xhat~ = xhat otherwise), |delta|, |delta'| <= u_s,
//     |zeta|, |zeta'| <= eta_s, so with rho = u_s (chi = 0) or 2 u_s + u_s^2:
//     |W'_ij xhat~_j - W_ij gamma_j xhat_j| <= rho |W_ij gamma_j xhat_j|
//       + eta_s ((1 + u_s)(|xhat_j| + chi |W_ij gamma_j|) + chi eta_s);
//     b'_i is within u_s |c_i| + (1 + u_s) e_c + eta_s of c_i = (W beta + b)_i:
//   E_f = (rho + gamma_(d+1)(1 + rho)) S + (u_s + gamma_(d+1)(1 + u_s)) |c|
//         + (1 + u_s)(1 + gamma_(d+1)) e_c
//         + (1 + gamma_(d+1)) (eta_s (1 + u_s)(sum_j |xhat_j| + chi sum_j |W_ij gamma_j|) + chi d eta_s^2 + eta_s)
//         + d eta (1 + gamma_d),
//     S = sum_j |W_ij gamma_j xhat_j|, e_c the double-double error of c (fold.h).
// The exact y* is a double-double too; its error
// e* = gamma_(2d+1)(2^-53)^2 (S + sum_j |W_ij beta_j| + |b_i|) is added to each bound.
// The sums in the bounds are float64 sums of non-negative terms, low by at
// most a relative gamma_(2d+2)(2^-53); each bound is raised by that factor.
#include "fold_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "normcheck/bounds.h"
#include "normcheck/float_format.h"
#include "round.h"

namespace normcheck::fold {
namespace {

constexpr double kU = kFloat32Format.unit_roundoff();              // 2^-24
constexpr double kEta = kFloat32Format.half_smallest_subnormal();  // 2^-150
constexpr double kU53 = kUnitRoundoff64;

}  // namespace

FoldCheck check_fold(const FoldCase& c, std::span<const std::vector<float>> xhat_rows) {
  const long e = c.original.w.rows(), d = c.original.w.cols();
  const bool has_beta = c.beta.size() != 0;
  const bool has_b = c.original.b.size() != 0;
  const bool has_b_folded = c.folded.b.size() != 0;
  const FloatFormat fmt = float_format(c.storage);
  const double us = fmt.unit_roundoff(), eta_s = fmt.half_smallest_subnormal();
  const double sum_slack = 1 + gamma_n(2.0 * d + 2, kU53);

  FoldCheck out;
  for (long i = 0; i < e; ++i) {
    for (long j = 0; j < d; ++j) out.overflowed_weights += std::isinf(c.folded.w(i, j)) ? 1 : 0;
    if (has_b_folded) out.overflowed_weights += std::isinf(c.folded.b(i)) ? 1 : 0;
  }

  const bool chi = c.storage_activations && c.storage != DType::f32;
  auto to_act = [&](float v) { return chi ? static_cast<float>(round_to_storage(c.storage, v)) : v; };
  const double alpha = chi ? us + gamma_n(2) * (1 + us) : gamma_n(2);
  const double eta_a = chi ? eta_s + 2 * kEta : kEta * (1 + kU);
  const double rho = chi ? 2 * us + us * us : us;
  std::vector<float> a(d), xs(d);
  std::vector<double> wg_row(2 * d), x_row(2 * d);
  double folded_sq = 0, unfolded_sq = 0;
  for (std::size_t r = 0; r < xhat_rows.size(); ++r) {
    const std::vector<float>& xhat = xhat_rows[r];
    // The unfolded affine, once per row (shared by every output).
    bool row_overflowed = false;
    for (long j = 0; j < d; ++j) {
      const float g = static_cast<float>(c.gamma(j)) * xhat[j];
      a[j] = to_act(has_beta ? g + static_cast<float>(c.beta(j)) : g);
      out.unfolded_overflows += std::isinf(a[j]) ? 1 : 0;
      row_overflowed = row_overflowed || std::isinf(a[j]);
      xs[j] = to_act(xhat[j]);
    }
    double sum_abs_xhat = 0;
    for (long j = 0; j < d; ++j) sum_abs_xhat += std::fabs(xhat[j]);
    for (long i = 0; i < e; ++i) {
      float yu = 0, yf = 0;
      double big_t = 0, s = 0, sum_abs_w = 0, sum_abs_wbeta = 0, sum_abs_wg = 0, sum_abs_wa = 0;
      for (long j = 0; j < d; ++j) {
        const double w = c.original.w(i, j);
        yu += static_cast<float>(w) * a[j];
        yf += static_cast<float>(c.folded.w(i, j)) * xs[j];
        const double wg = w * c.gamma(j);  // exact: two storage values
        s += std::fabs(wg * xhat[j]);
        sum_abs_wg += std::fabs(wg);
        sum_abs_w += std::fabs(w);
        const double wb = has_beta ? w * c.beta(j) : 0.0;
        sum_abs_wbeta += std::fabs(wb);
        const double a_j = std::fabs(c.gamma(j) * xhat[j]) + (has_beta ? std::fabs(c.beta(j)) : 0.0);
        big_t += std::fabs(w) * a_j;
        sum_abs_wa += std::fabs(w) * a_j;
      }
      const double b = has_b ? c.original.b(i) : 0.0;
      yu += static_cast<float>(b);
      yf += static_cast<float>(has_b_folded ? c.folded.b(i) : 0.0);
      big_t += std::fabs(b);

      // y*: sum_j (W_ij gamma_j) xhat_j + sum_j W_ij beta_j + b as a double-double.
      for (long j = 0; j < d; ++j) {
        wg_row[j] = c.original.w(i, j) * c.gamma(j);
        x_row[j] = xhat[j];
        wg_row[d + j] = c.original.w(i, j);
        x_row[d + j] = has_beta ? c.beta(j) : 0.0;
      }
      const DoubleDouble exact = dot_dd(wg_row.data(), x_row.data(), 2 * d, 1, b);
      const DoubleDouble cdd = dot_dd(wg_row.data() + d, x_row.data() + d, d, 1, b);
      const double e_exact = gamma_n(2.0 * d + 1, kU53) * gamma_n(2.0 * d + 1, kU53) * (s + sum_abs_wbeta + std::fabs(b));
      const double e_c = gamma_n(d + 1.0, kU53) * gamma_n(d + 1.0, kU53) * (sum_abs_wbeta + std::fabs(b));
      const double abs_c = std::fabs(cdd.hi) + std::fabs(cdd.lo) + e_c;

      const double g1 = gamma_n(d + 1.0);
      const double bound_u = ((alpha + g1 * (1 + alpha)) * sum_abs_wa + g1 * std::fabs(b) +
                              eta_a * (1 + g1) * sum_abs_w + d * kEta * (1 + gamma_n(d))) *
                                 sum_slack +
                             e_exact;
      const double bound_f =
          ((rho + g1 * (1 + rho)) * s + (us + g1 * (1 + us)) * abs_c + (1 + us) * (1 + g1) * e_c +
           (1 + g1) * (eta_s * (1 + us) * (sum_abs_xhat + (chi ? sum_abs_wg : 0.0)) + (chi ? d * eta_s * eta_s : 0.0) + eta_s) +
           d * kEta * (1 + gamma_n(d))) *
              sum_slack +
          e_exact;

      // Errors: (computed - hi) - lo, each step exact or far below the bounds.
      const double err_u = std::fabs((static_cast<double>(yu) - exact.hi) - exact.lo);
      const double err_f = std::isfinite(yf) ? std::fabs((static_cast<double>(yf) - exact.hi) - exact.lo)
                                             : std::numeric_limits<double>::infinity();
      if (!std::isfinite(yf)) ++out.nonfinite_outputs;
      auto ratio = [](double num, double den) {
        if (num == 0) return 0.0;
        return std::isnan(num) ? std::numeric_limits<double>::infinity() : num / den;
      };
      const double scale = big_t > 0 ? big_t : 1;
      out.folded_over_bound = std::max(out.folded_over_bound, ratio(err_f, bound_f));
      out.folded_error = std::max(out.folded_error, ratio(err_f, scale));
      out.folded_bound = std::max(out.folded_bound, bound_f / scale);
      folded_sq += std::pow(err_f / scale, 2);
      ++out.elements;
      if (!std::isfinite(yu) && row_overflowed) {
        // The unfolded model itself overflowed (an f16 activation gamma xhat +
        // beta past 65504): nothing to compare with; the folded output is still
        // held to its bound against the exact result above.
        ++out.unfolded_nonfinite_outputs;
        continue;
      }
      const double diff = std::fabs(static_cast<double>(yf) - static_cast<double>(yu));
      const double diff_ratio = ratio(diff, bound_f + bound_u);
      if (diff_ratio > out.diff_over_bound || (std::isnan(diff_ratio) && out.worst.empty())) {
        out.diff_over_bound = std::isnan(diff_ratio) ? std::numeric_limits<double>::infinity() : diff_ratio;
        char buf[256];
        std::snprintf(buf, sizeof buf, "row %zu, output %ld: folded %.9g, unfolded %.9g, exact %.17g, bound %.3g",
                      r, i, static_cast<double>(yf), static_cast<double>(yu), exact.hi, bound_f + bound_u);
        out.worst = buf;
      }
      out.unfolded_over_bound = std::max(out.unfolded_over_bound, ratio(err_u, bound_u));
      out.unfolded_error = std::max(out.unfolded_error, ratio(err_u, scale));
      out.unfolded_bound = std::max(out.unfolded_bound, bound_u / scale);
      unfolded_sq += std::pow(err_u / scale, 2);
    }
  }
  if (out.elements) out.folded_rms_error = std::sqrt(folded_sq / out.elements);
  if (const long compared = out.elements - out.unfolded_nonfinite_outputs; compared > 0)
    out.unfolded_rms_error = std::sqrt(unfolded_sq / compared);
  return out;
}

void merge(FoldCheck& a, const FoldCheck& b) {
  const long n = a.elements + b.elements;
  auto rms = [&](double ra, double rb) {
    return n ? std::sqrt((ra * ra * a.elements + rb * rb * b.elements) / n) : 0.0;
  };
  a.folded_rms_error = rms(a.folded_rms_error, b.folded_rms_error);
  const long ca = a.elements - a.unfolded_nonfinite_outputs, cb = b.elements - b.unfolded_nonfinite_outputs;
  a.unfolded_rms_error = ca + cb ? std::sqrt((a.unfolded_rms_error * a.unfolded_rms_error * ca +
                                              b.unfolded_rms_error * b.unfolded_rms_error * cb) / (ca + cb))
                                 : 0.0;
  if (b.diff_over_bound > a.diff_over_bound || a.worst.empty()) {
    a.diff_over_bound = std::max(a.diff_over_bound, b.diff_over_bound);
    if (!b.worst.empty() && b.diff_over_bound >= a.diff_over_bound) a.worst = b.worst;
  }
  a.folded_over_bound = std::max(a.folded_over_bound, b.folded_over_bound);
  a.unfolded_over_bound = std::max(a.unfolded_over_bound, b.unfolded_over_bound);
  a.folded_error = std::max(a.folded_error, b.folded_error);
  a.unfolded_error = std::max(a.unfolded_error, b.unfolded_error);
  a.folded_bound = std::max(a.folded_bound, b.folded_bound);
  a.unfolded_bound = std::max(a.unfolded_bound, b.unfolded_bound);
  a.overflowed_weights += b.overflowed_weights;
  a.nonfinite_outputs += b.nonfinite_outputs;
  a.unfolded_overflows += b.unfolded_overflows;
  a.unfolded_nonfinite_outputs += b.unfolded_nonfinite_outputs;
  a.elements = n;
}

// With m the float64 mean of v (error e_m <= gamma_d(2^-53) sum|v| / d +
// 2^-53 |m| against the real mean) and the centring's own mean a double-double
// (error <= d 2^-90 max|v|, far above its actual 2^-100 level): each entry is
// after_i = (v_i - mean)(1 + delta) + zeta, |delta| <= u_s, |zeta| <= eta_s, so
//   |after_i - (v_i - m)| <= u_s |v_i - m| + eta_s + (1 + u_s)(e_m + d 2^-90 max|v|),
//   |sum_i after_i| <= u_s sum_i |v_i - m| + d eta_s + (1 + u_s) d (e_m + 2^-90 max|v|)
// (sum_i (v_i - mean) = 0 exactly). The bounds' float64 sums (relative error
// below d 2^-53) are raised by 1 + 1e-9, enough for d < 2^23.
CentringCheck check_centring(const Vector& before, const Vector& after, DType storage) {
  const FloatFormat fmt = float_format(storage);
  const double us = fmt.unit_roundoff(), eta_s = fmt.half_smallest_subnormal();
  const long d = before.size();
  const double m = before.mean();
  const double max_abs = before.cwiseAbs().maxCoeff();
  const double e_m = gamma_n(static_cast<double>(d), kU53) * before.cwiseAbs().sum() / d + kU53 * std::fabs(m);
  const double slack = 1 + 1e-9;
  CentringCheck out;
  double sum_dev = 0;
  for (long i = 0; i < d; ++i) {
    out.overflowed += std::isinf(after(i)) ? 1 : 0;
    const double dev = std::fabs(before(i) - m);
    sum_dev += dev;
    const double bound = (us * dev + eta_s + (1 + us) * (e_m + d * 0x1p-90 * max_abs)) * slack;
    const double err = std::fabs(after(i) - (before(i) - m));
    out.entry_over_bound = std::max(out.entry_over_bound, err == 0 ? 0.0 : err / bound);
  }
  const double sum_bound = (us * sum_dev + d * eta_s + (1 + us) * d * (e_m + 0x1p-90 * max_abs)) * slack;
  const double s = std::fabs(after.sum());
  out.sum_over_bound = s == 0 ? 0.0 : s / sum_bound;
  return out;
}

}  // namespace normcheck::fold
