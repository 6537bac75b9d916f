// One row of the exact LayerNorm / RMSNorm reference at the working precision
// (see reference_mp.h). Every operation is one correctly rounded MPFR call on
// exact float inputs, so each carries a relative error of at most 2^-p; the
// tests in tests/reference show the accumulated error is far below 2^-100.
#include "reference_mp.h"

#include <cmath>
#include <cstdlib>

namespace normcheck::mp {
namespace {

bool all_finite(std::span<const float> v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

}  // namespace

Real make_real(unsigned bits) {
  Real v;
  mpfr_set_prec(raw(v), static_cast<mpfr_prec_t>(bits));  // leaves NaN
  return v;
}

// mpfr_get_flt rounds once, from the full-precision value, to the float format
// including its subnormal range, and returns +-inf past the rounding boundary
// above FLT_MAX (tests/reference check the tie and subnormal cases).
float round_to_float(const Real& v) { return mpfr_get_flt(raw(v), MPFR_RNDN); }
double round_to_double(const Real& v) { return mpfr_get_d(raw(v), MPFR_RNDN); }

NormRow::NormRow(Norm norm, unsigned precision_bits)
    : mean(make_real(precision_bits)),
      variance(make_real(precision_bits)),
      r(make_real(precision_bits)),
      mean_abs_x(make_real(precision_bits)),
      max_abs_x(make_real(precision_bits)),
      eps_share(make_real(precision_bits)),
      mean_g(make_real(precision_bits)),
      mean_g_xhat(make_real(precision_bits)),
      mean_abs_g(make_real(precision_bits)),
      mean_abs_g_xhat(make_real(precision_bits)),
      norm_(norm),
      bits_(precision_bits),
      tmp_(make_real(precision_bits)),
      tmp2_(make_real(precision_bits)),
      eps_(make_real(precision_bits)),
      sd_(make_real(precision_bits)) {}

void NormRow::resize(int64_t d) {
  d_ = d;
  if (static_cast<int64_t>(xhat.size()) >= d) return;
  const Real proto = make_real(bits_);  // copies keep its precision
  xhat.resize(d, proto);
  y.resize(d, proto);
  dx.resize(d, proto);
  g_.resize(d, proto);
}

void NormRow::forward(std::span<const float> x, std::span<const float> gamma,
                      std::span<const float> beta, float eps, bool with_y) {
  const int64_t d = static_cast<int64_t>(x.size());
  resize(d);
  finite = all_finite(x);
  mpfr_set_flt(raw(eps_), eps, MPFR_RNDN);

  // Sums in the extended reals: inf + -inf and NaN give NaN, as the mean must.
  mpfr_set_zero(raw(mean), 1);
  mpfr_set_zero(raw(mean_abs_x), 1);
  double max_abs = 0;  // a float is exact in double; NaN wins, as in the sums
  for (int64_t i = 0; i < d; ++i) {
    const double xi = x[i];  // float -> double is exact
    mpfr_add_d(raw(mean), raw(mean), xi, MPFR_RNDN);
    mpfr_add_d(raw(mean_abs_x), raw(mean_abs_x), std::fabs(xi), MPFR_RNDN);
    if (std::isnan(xi) || std::fabs(xi) > max_abs) max_abs = std::fabs(xi);
  }
  mpfr_set_d(raw(max_abs_x), max_abs, MPFR_RNDN);
  mpfr_div_si(raw(mean), raw(mean), static_cast<long>(d), MPFR_RNDN);
  mpfr_div_si(raw(mean_abs_x), raw(mean_abs_x), static_cast<long>(d), MPFR_RNDN);

  if (!finite) {  // docs/semantics.md: y, xhat and r of a non-finite row are NaN
    mpfr_set_nan(raw(variance));
    mpfr_set_nan(raw(r));
    mpfr_set_nan(raw(eps_share));
    for (int64_t i = 0; i < d; ++i) {
      mpfr_set_nan(raw(xhat[i]));
      mpfr_set_nan(raw(y[i]));
    }
    return;
  }

  // Two passes: the deviations from the (2^-p-accurate) mean, then their
  // squares. The first-order effect of the mean's error on sum (x - c)^2
  // vanishes at c = mean, so the variance keeps full relative precision.
  mpfr_set_zero(raw(variance), 1);
  for (int64_t i = 0; i < d; ++i) {
    if (norm_ == Norm::layer)
      mpfr_d_sub(raw(xhat[i]), x[i], raw(mean), MPFR_RNDN);
    else
      mpfr_set_flt(raw(xhat[i]), x[i], MPFR_RNDN);
    mpfr_fma(raw(variance), raw(xhat[i]), raw(xhat[i]), raw(variance), MPFR_RNDN);
  }
  mpfr_div_si(raw(variance), raw(variance), static_cast<long>(d), MPFR_RNDN);

  mpfr_add(raw(tmp_), raw(variance), raw(eps_), MPFR_RNDN);
  mpfr_rec_sqrt(raw(r), raw(tmp_), MPFR_RNDN);  // 1/sqrt(+0) = +inf: eps = 0, constant row
  mpfr_sqrt(raw(sd_), raw(tmp_), MPFR_RNDN);
  mpfr_div(raw(eps_share), raw(eps_), raw(tmp_), MPFR_RNDN);

  // xhat = (x - mean) / sqrt(variance + eps) rather than times r: when the
  // exact output is a dyadic rational (the only case in which it can be a
  // float or a rounding tie) the mean, the deviations and sqrt(variance + eps)
  // are dyadic too and every step is exact, so ties round correctly.
  for (int64_t i = 0; i < d; ++i) {
    mpfr_div(raw(xhat[i]), raw(xhat[i]), raw(sd_), MPFR_RNDN);  // 0 / 0 = NaN, as agreed
    if (!with_y) continue;
    // y = gamma xhat + beta in one rounding; IEEE rules for non-finite gamma/beta.
    if (!gamma.empty() && !beta.empty()) {
      mpfr_set_flt(raw(tmp_), gamma[i], MPFR_RNDN);
      mpfr_set_flt(raw(tmp2_), beta[i], MPFR_RNDN);
      mpfr_fma(raw(y[i]), raw(tmp_), raw(xhat[i]), raw(tmp2_), MPFR_RNDN);
    } else if (!gamma.empty()) {
      mpfr_mul_d(raw(y[i]), raw(xhat[i]), gamma[i], MPFR_RNDN);
    } else if (!beta.empty()) {
      mpfr_add_d(raw(y[i]), raw(xhat[i]), beta[i], MPFR_RNDN);
    } else {
      mpfr_set(raw(y[i]), raw(xhat[i]), MPFR_RNDN);
    }
  }
}

void NormRow::backward(std::span<const float> dy, std::span<const float> gamma) {
  const int64_t d = d_;
  dy_finite = all_finite(dy);
  mpfr_set_zero(raw(mean_g), 1);
  mpfr_set_zero(raw(mean_g_xhat), 1);
  mpfr_set_zero(raw(mean_abs_g), 1);
  mpfr_set_zero(raw(mean_abs_g_xhat), 1);
  for (int64_t i = 0; i < d; ++i) {
    mpfr_set_flt(raw(g_[i]), dy[i], MPFR_RNDN);
    if (!gamma.empty()) mpfr_mul_d(raw(g_[i]), raw(g_[i]), gamma[i], MPFR_RNDN);  // exact: 48 bits
    mpfr_add(raw(mean_g), raw(mean_g), raw(g_[i]), MPFR_RNDN);
    mpfr_fma(raw(mean_g_xhat), raw(g_[i]), raw(xhat[i]), raw(mean_g_xhat), MPFR_RNDN);
    mpfr_abs(raw(tmp_), raw(g_[i]), MPFR_RNDN);
    mpfr_add(raw(mean_abs_g), raw(mean_abs_g), raw(tmp_), MPFR_RNDN);
    mpfr_mul(raw(tmp_), raw(tmp_), raw(xhat[i]), MPFR_RNDN);
    mpfr_abs(raw(tmp_), raw(tmp_), MPFR_RNDN);
    mpfr_add(raw(mean_abs_g_xhat), raw(mean_abs_g_xhat), raw(tmp_), MPFR_RNDN);
  }
  mpfr_div_si(raw(mean_g), raw(mean_g), static_cast<long>(d), MPFR_RNDN);
  mpfr_div_si(raw(mean_g_xhat), raw(mean_g_xhat), static_cast<long>(d), MPFR_RNDN);
  mpfr_div_si(raw(mean_abs_g), raw(mean_abs_g), static_cast<long>(d), MPFR_RNDN);
  mpfr_div_si(raw(mean_abs_g_xhat), raw(mean_abs_g_xhat), static_cast<long>(d), MPFR_RNDN);

  if (!finite || !dy_finite) {  // docs/semantics.md: the whole dx row is NaN
    for (int64_t i = 0; i < d; ++i) mpfr_set_nan(raw(dx[i]));
    return;
  }
  // LayerNorm: dx = r (g - mean(g) - xhat mean(g xhat)); RMSNorm drops mean(g).
  mpfr_neg(raw(tmp2_), raw(mean_g_xhat), MPFR_RNDN);
  for (int64_t i = 0; i < d; ++i) {
    if (norm_ == Norm::layer)
      mpfr_sub(raw(tmp_), raw(g_[i]), raw(mean_g), MPFR_RNDN);
    else
      mpfr_set(raw(tmp_), raw(g_[i]), MPFR_RNDN);
    mpfr_fma(raw(dx[i]), raw(xhat[i]), raw(tmp2_), raw(tmp_), MPFR_RNDN);
    mpfr_div(raw(dx[i]), raw(dx[i]), raw(sd_), MPFR_RNDN);  // times r; exact when dyadic
  }
}

}  // namespace normcheck::mp
