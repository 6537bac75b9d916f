// One row of the exact LayerNorm / RMSNorm reference (see reference_mp.h):
// exact dyadic numerators, then a Ziv loop over the few rounded operations
// that turn them into outputs. docs/semantics.md derives the identities and
// the error bounds used below.
#include "reference_mp.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

namespace normcheck::mp {
namespace {

bool all_finite(std::span<const float> v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

// An operation on exact operands whose result the destination's precision
// holds must not round; a rounding here would silently break every output.
void require_exact(int ternary) {
  if (ternary != 0) throw std::logic_error("normcheck reference: an exact operation rounded");
}

// A non-zero finite MPFR value is a multiple of 2^low_bit(v).
mpfr_exp_t low_bit(mpfr_srcptr v) { return mpfr_get_exp(v) - mpfr_min_prec(v); }

mpfr_prec_t at_least_min(long bits) { return std::max<long>(bits, MPFR_PREC_MIN); }

// a +- b is a multiple of 2^min(low bits) below 2^(max exponent + 1).
void exact_sum(Real& dst, const Real& a, const Real& b, bool subtract) {
  mpfr_srcptr x = raw(a), y = raw(b);
  long bits = 1;
  if (mpfr_regular_p(x) && mpfr_regular_p(y))
    bits = std::max(mpfr_get_exp(x), mpfr_get_exp(y)) + 1 - std::min(low_bit(x), low_bit(y));
  else if (mpfr_regular_p(x))
    bits = mpfr_min_prec(x);
  else if (mpfr_regular_p(y))
    bits = mpfr_min_prec(y);
  mpfr_set_prec(raw(dst), at_least_min(bits));
  require_exact(subtract ? mpfr_sub(raw(dst), x, y, MPFR_RNDN) : mpfr_add(raw(dst), x, y, MPFR_RNDN));
}

// The smallest L with d <= 2^L: a sum of d terms below 2^e stays below 2^(e + L).
long log2_ceil(int64_t d) { return d <= 1 ? 0 : 64 - std::countl_zero(static_cast<uint64_t>(d - 1)); }

// An exact numerator over an exact denominator, rounded once to double (the
// statistics are far inside the normal double range).
double quotient_to_double(Real& scratch, const Real& num, const Real& den) {
  mpfr_set_prec(raw(scratch), 53);
  mpfr_div(raw(scratch), raw(num), raw(den), MPFR_RNDN);
  return mpfr_get_d(raw(scratch), MPFR_RNDN);
}

// |v - real| <= 2^(EXP(v) + slack - p) for an approximation v at precision p
// derived by the caller; exact when no operation of its chain rounded. A
// zero or non-finite v of these chains (a product or quotient of an exact
// numerator with rounded factors; MPFR neither underflows nor overflows
// here) is exact: a zero numerator, or IEEE special values.
ErrorBound within(const Real& v, bool exact, int slack, unsigned p) {
  if (exact || !mpfr_regular_p(raw(v))) return {};
  return {false, mpfr_get_exp(raw(v)) + slack - static_cast<mpfr_exp_t>(p)};
}

// Bound of a sum of two errors: 2^a + 2^b <= 2^(max(a, b) + 1).
ErrorBound plus(ErrorBound a, ErrorBound b) {
  if (a.exact) return b;
  if (b.exact) return a;
  return {false, std::max(a.exp, b.exp) + 1};
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }
bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

[[noreturn]] void undecided() {
  throw std::runtime_error("normcheck reference: a rounding stayed undecided at " +
                           std::to_string(kZivCapBits) + " bits");
}

}  // namespace

Real make_real(unsigned bits) {
  Real v;
  mpfr_set_prec(raw(v), static_cast<mpfr_prec_t>(bits));  // leaves NaN
  return v;
}

void exact_add(Real& dst, const Real& a, const Real& b) { exact_sum(dst, a, b, false); }
void exact_sub(Real& dst, const Real& a, const Real& b) { exact_sum(dst, a, b, true); }

void exact_mul(Real& dst, const Real& a, const Real& b) {
  mpfr_set_prec(raw(dst), mpfr_get_prec(raw(a)) + mpfr_get_prec(raw(b)));
  require_exact(mpfr_mul(raw(dst), raw(a), raw(b), MPFR_RNDN));
}

bool signed_sqrt_ratio(Real& dst, const Real& a, long d, const Real& den, Real& sq, Real& sq_d) {
  exact_mul(sq, a, a);
  mpfr_set_prec(raw(sq_d), mpfr_get_prec(raw(sq)) + 64);
  require_exact(mpfr_mul_si(raw(sq_d), raw(sq), d, MPFR_RNDN));
  const int t1 = mpfr_div(raw(dst), raw(sq_d), raw(den), MPFR_RNDN);  // 0/0 = NaN (docs/semantics.md)
  const int t2 = mpfr_sqrt(raw(dst), raw(dst), MPFR_RNDN);
  if (mpfr_signbit(raw(a))) mpfr_neg(raw(dst), raw(dst), MPFR_RNDN);
  return t1 == 0 && t2 == 0;
}

// mpfr_get_flt rounds once, to the float format including its subnormal
// range, and returns +-inf past the rounding boundary above FLT_MAX.
bool RoundingDecider::decide(const Real& v, ErrorBound error, Roundings& out) {
  if (error.exact || !mpfr_number_p(raw(v))) {
    out = {mpfr_get_flt(raw(v), MPFR_RNDN), mpfr_get_d(raw(v), MPFR_RNDN)};
    return true;
  }
  const mpfr_prec_t p = mpfr_get_prec(raw(v));
  mpfr_set_prec(raw(lo_), p);
  mpfr_set_prec(raw(hi_), p);
  mpfr_set_ui_2exp(raw(step_), 1, error.exp, MPFR_RNDN);
  mpfr_sub(raw(lo_), raw(v), raw(step_), MPFR_RNDD);  // outward: [lo, hi] holds the real
  mpfr_add(raw(hi_), raw(v), raw(step_), MPFR_RNDU);
  const float f = mpfr_get_flt(raw(lo_), MPFR_RNDN);
  const float f_hi = mpfr_get_flt(raw(hi_), MPFR_RNDN);
  const double d = mpfr_get_d(raw(lo_), MPFR_RNDN);
  const double d_hi = mpfr_get_d(raw(hi_), MPFR_RNDN);
  // An interval around zero rounds to -0 at one end and +0 at the other: both
  // are the same zero to every metric (+0 == -0), so it is decided; the sign
  // is v's (an exactly zero sum is +0, as IEEE gives it).
  if (f == 0 && f_hi == 0 && d == 0 && d_hi == 0) {
    out = {std::copysign(0.0f, static_cast<float>(mpfr_sgn(raw(v)))),
           std::copysign(0.0, static_cast<double>(mpfr_sgn(raw(v))))};
    return true;
  }
  if (!same_bits(f, f_hi) || !same_bits(d, d_hi)) return false;
  out = {f, d};
  return true;
}

namespace {
// Of two adjacent values, the one with an even last bit (round half to even).
template <class Float, class Bits>
Float even_of(Float a, Float b) {
  if (a == b) return a;
  return (std::bit_cast<Bits>(a) & 1) == 0 ? a : b;
}
}  // namespace

Roundings RoundingDecider::as_midpoint(const Real& v, ErrorBound error) {
  Roundings decided;
  if (decide(v, error, decided)) return decided;
  return {even_of<float, uint32_t>(mpfr_get_flt(raw(lo_), MPFR_RNDN), mpfr_get_flt(raw(hi_), MPFR_RNDN)),
          even_of<double, uint64_t>(mpfr_get_d(raw(lo_), MPFR_RNDN), mpfr_get_d(raw(hi_), MPFR_RNDN))};
}

NormRow::NormRow(Norm norm, unsigned start_bits)
    : sum_x(make_real(64)),
      norm_sq(make_real(64)),
      sum_g(make_real(64)),
      sum_g_dev(make_real(64)),
      norm_(norm),
      start_bits_(start_bits),
      k_(make_real(64)),
      kkd_(make_real(192)),  // k^2 d < 2^189 for d < 2^63: exact
      eps_kkd_(make_real(24 + 192)),
      sum_abs_x_(make_real(64)),
      c_(make_real(start_bits)),
      t_(make_real(start_bits)),
      work_(make_real(start_bits)),
      work2_(make_real(start_bits)),
      k_g_(make_real(64)),
      a_(make_real(64)),
      b_(make_real(64)),
      e_(make_real(64)),
      k_G_(make_real(64)),
      n3_(make_real(64)) {}

void NormRow::resize(int64_t d) {
  d_ = d;
  if (static_cast<int64_t>(dev.size()) >= d) return;
  const Real proto = make_real(64);
  dev.resize(d, proto);
  dx_num.resize(d, proto);
  xhat.resize(d);
  y.resize(d);
  dx.resize(d);
}

void NormRow::prepare(std::span<const float> x, float eps) {
  const int64_t d = static_cast<int64_t>(x.size());
  resize(d);
  finite = all_finite(x);
  c_bits_ = 0;
  const long k = norm_ == Norm::layer ? static_cast<long>(d) : 1;
  require_exact(mpfr_set_si(raw(k_), k, MPFR_RNDN));
  require_exact(mpfr_set_si(raw(kkd_), k, MPFR_RNDN));
  require_exact(mpfr_mul_si(raw(kkd_), raw(kkd_), k, MPFR_RNDN));
  require_exact(mpfr_mul_si(raw(kkd_), raw(kkd_), static_cast<long>(d), MPFR_RNDN));
  require_exact(mpfr_set_flt(raw(eps_kkd_), eps, MPFR_RNDN));
  require_exact(mpfr_mul(raw(eps_kkd_), raw(eps_kkd_), raw(kkd_), MPFR_RNDN));

  // Every finite x is a multiple of 2^(e - 24) below 2^e (frexp's e; a
  // subnormal is a multiple of 2^-149, a coarser grid): emax and low bound
  // the exponents of the whole row.
  long emax = LONG_MIN, low = LONG_MAX;
  double max_abs = 0;  // a float is exact in double; NaN wins, as in the sums
  for (float f : x) {
    const double xi = f;
    if (std::isnan(xi) || std::fabs(xi) > max_abs) max_abs = std::fabs(xi);
    if (!std::isfinite(xi) || xi == 0) continue;
    int e;
    std::frexp(xi, &e);
    emax = std::max<long>(emax, e);
    low = std::min<long>(low, e - 24);
  }
  if (emax == LONG_MIN) emax = low = 0;  // all zero (or non-finite)
  max_abs_x = max_abs;
  const long L = log2_ceil(d);

  // S and sum |x|: multiples of 2^low below 2^(emax + L). Sums in the
  // extended reals: inf + -inf and NaN give NaN, as the mean must.
  mpfr_set_prec(raw(sum_x), at_least_min(emax + L - low + 2));
  mpfr_set_prec(raw(sum_abs_x_), at_least_min(emax + L - low + 2));
  mpfr_set_zero(raw(sum_x), 1);
  mpfr_set_zero(raw(sum_abs_x_), 1);
  for (float f : x) {
    require_exact(mpfr_add_d(raw(sum_x), raw(sum_x), f, MPFR_RNDN));
    require_exact(mpfr_add_d(raw(sum_abs_x_), raw(sum_abs_x_), std::fabs(double{f}), MPFR_RNDN));
  }
  Real& scratch = work_;
  mpfr_set_prec(raw(scratch), 53);
  mpfr_div_si(raw(scratch), raw(sum_abs_x_), static_cast<long>(d), MPFR_RNDN);
  mean_abs_x = mpfr_get_d(raw(scratch), MPFR_RNDN);  // one rounding of the exact sum

  if (!finite) {  // docs/semantics.md: y, xhat and r of a non-finite row are NaN
    for (int64_t i = 0; i < d; ++i) mpfr_set_nan(raw(dev[i]));
    mpfr_set_nan(raw(norm_sq));
    variance = eps_share = std::nan("");
    dev_exp_max_ = dev_low_ = 0;
    return;
  }

  // D_i = d x_i - S: multiples of 2^low below 2^(emax + L + 1). RMSNorm: x_i.
  dev_exp_max_ = norm_ == Norm::layer ? emax + L + 1 : emax;
  dev_low_ = low;
  for (int64_t i = 0; i < d; ++i) {
    mpfr_set_prec(raw(dev[i]), at_least_min(dev_exp_max_ - low + 2));
    require_exact(mpfr_set_flt(raw(dev[i]), x[i], MPFR_RNDN));
    if (norm_ == Norm::rms) continue;
    require_exact(mpfr_mul_si(raw(dev[i]), raw(dev[i]), k, MPFR_RNDN));
    require_exact(mpfr_sub(raw(dev[i]), raw(dev[i]), raw(sum_x), MPFR_RNDN));
  }
  // sum D_i^2: multiples of 2^(2 low) below 2^(2 dev_exp_max + L).
  mpfr_set_prec(raw(norm_sq), at_least_min(2 * dev_exp_max_ + L - 2 * low + 2));
  mpfr_set_zero(raw(norm_sq), 1);
  for (int64_t i = 0; i < d; ++i)
    require_exact(mpfr_fma(raw(norm_sq), raw(dev[i]), raw(dev[i]), raw(norm_sq), MPFR_RNDN));
  variance = quotient_to_double(scratch, norm_sq, kkd_);  // sum D^2 / (k^2 d)
  exact_add(work2_, norm_sq, eps_kkd_);                   // N = sum D^2 + eps k^2 d
  mpfr_swap(raw(norm_sq), raw(work2_));
  eps_share = quotient_to_double(scratch, eps_kkd_, norm_sq);  // 0/0 = NaN, as eps r^2 is
}

// c = sqrt(RN(d / N)) (1 + a2): relative error (1 + u)^(1/2) (1 + u) - 1 <= 2u,
// u = 2^-bits. N = 0 gives d/0 = +inf and c = +inf exactly.
const Real& NormRow::c_at(unsigned bits, bool& exact) {
  if (c_bits_ != bits) {
    mpfr_set_prec(raw(c_), bits);
    mpfr_set_prec(raw(t_), bits);
    if (!finite) {
      mpfr_set_nan(raw(c_));
      c_exact_ = true;
    } else {
      const int t1 = mpfr_si_div(raw(t_), static_cast<long>(d_), raw(norm_sq), MPFR_RNDN);
      const int t2 = mpfr_sqrt(raw(c_), raw(t_), MPFR_RNDN);
      c_exact_ = t1 == 0 && t2 == 0;
    }
    c_bits_ = bits;
  }
  exact = c_exact_;
  return c_;
}

void NormRow::forward(std::span<const float> x, std::span<const float> gamma,
                      std::span<const float> beta, float eps, bool with_y) {
  prepare(x, eps);
  decide_forward(gamma, beta, with_y);
}

// The outputs at working precision p, u = 2^-p, each kept once decided:
//   mean = RN(S/d): error <= 2^(EXP - p - 1).
//   r = RN(rec_sqrt(RN(N/(k^2 d)))): relative (1 - u)^(-1/2) (1 + u) - 1 <= 2u
//     of r, so <= 4u |r~| < 2^(EXP + 2 - p).
//   xhat, first attempt: RN(D c), relative (1 + 2u)(1 + u) - 1 <= 3.01u of
//     xhat, so < 2^(EXP + 3 - p) (a zero is exact: D = 0). Later attempts:
//     signed_sqrt_ratio(D, d, N), 1.51u, exact whenever xhat is dyadic (c
//     need not be: x = {38, -9.5 x 4} has c = 1/95, xhat_1 = -1/2).
//   y, first attempt: RN(gamma xhat~ + beta), |gamma| 2^(EXP(xhat~) + 3 - p)
//     from xhat, plus 2^(EXP(y~) - p) when the fma rounded. Later attempts:
//     gamma xhat = signed_sqrt_ratio(gamma D, d, N) (< 2^(EXP + 3 - p)) plus
//     beta, exact whenever y is dyadic: then gamma xhat is, though xhat need
//     not be (xhat = 1/7 with gamma = 7 m 2^e).
// An output whose chain rounded nowhere is exact, which is how exact ties
// (dyadic outputs) are recognised: every later attempt takes the square root
// of the output's own square, a^2 d / N with a = D, gamma D, M, which is a
// dyadic square whenever the output is dyadic, and is exact once p holds it.
void NormRow::decide_forward(std::span<const float> gamma, std::span<const float> beta,
                             bool with_y) {
  const int64_t d = d_;
  pending_.assign(2 * d, 1);
  if (!with_y) std::fill(pending_.begin() + d, pending_.end(), 0);
  bool mean_pending = true, r_pending = true;
  for (unsigned p = start_bits_;; p *= 2) {
    if (p > kZivCapBits) undecided();
    bits_used = p;
    bool open = false;
    mpfr_set_prec(raw(work_), p);
    mpfr_set_prec(raw(work2_), p);
    if (mean_pending) {
      const int t = mpfr_div_si(raw(work_), raw(sum_x), static_cast<long>(d), MPFR_RNDN);
      mean_pending = !decider_.decide(work_, within(work_, t == 0, 0, p), mean);
      open |= mean_pending;
    }
    if (r_pending) {
      if (!finite) {
        mpfr_set_nan(raw(work_));
        r_pending = !decider_.decide(work_, {}, r);
      } else {
        const int t1 = mpfr_div(raw(work2_), raw(norm_sq), raw(kkd_), MPFR_RNDN);
        const int t2 = mpfr_rec_sqrt(raw(work_), raw(work2_), MPFR_RNDN);
        r_pending = !decider_.decide(work_, within(work_, t1 == 0 && t2 == 0, 2, p), r);
      }
      open |= r_pending;
    }
    bool c_exact;
    const Real& c = c_at(p, c_exact);
    for (int64_t i = 0; i < d; ++i) {
      if (!pending_[i] && !pending_[d + i]) continue;
      const bool exact =
          p == start_bits_
              ? mpfr_mul(raw(work_), raw(dev[i]), raw(c), MPFR_RNDN) == 0 && c_exact  // 0 x inf = NaN
              : signed_sqrt_ratio(work_, dev[i], static_cast<long>(d), norm_sq, b_, e_);
      const ErrorBound xhat_error = within(work_, exact, 3, p);
      if (pending_[i]) open |= (pending_[i] = !decider_.decide(work_, xhat_error, xhat[i]));
      if (!pending_[d + i]) continue;
      // IEEE rules for non-finite gamma/beta throughout.
      const double g = gamma.empty() ? 1.0 : gamma[i];
      ErrorBound y_error;
      if (p == start_bits_) {  // y = RN(gamma xhat~ + beta)
        int ty;
        if (beta.empty()) {
          ty = mpfr_mul_d(raw(work2_), raw(work_), g, MPFR_RNDN);
        } else {
          mpfr_set_prec(raw(t_), 24);  // c_ keeps its value; t_ is free after c_at
          mpfr_set_flt(raw(t_), beta[i], MPFR_RNDN);
          ty = mpfr_fma(raw(work2_), raw(work_), raw(a_from_double(g)), raw(t_), MPFR_RNDN);
        }
        y_error = within(work2_, ty == 0, 0, p);
        if (!xhat_error.exact && g != 0 && std::isfinite(g)) {
          int eg;
          std::frexp(g, &eg);
          y_error = plus(y_error, {false, xhat_error.exp + eg});
        }
      } else {  // y = RN(signed_sqrt_ratio(gamma D, d, N) + beta)
        exact_mul(k_g_, a_from_double(g), dev[i]);
        const bool gx_exact = signed_sqrt_ratio(work2_, k_g_, static_cast<long>(d), norm_sq, b_, e_);
        y_error = within(work2_, gx_exact, 3, p);
        if (!beta.empty()) {
          const int ty = mpfr_add_d(raw(work2_), raw(work2_), beta[i], MPFR_RNDN);
          y_error = plus(y_error, within(work2_, ty == 0, 0, p));
        }
      }
      open |= (pending_[d + i] = !decider_.decide(work2_, y_error, y[i]));
    }
    if (!open) return;
  }
}

const Real& NormRow::a_from_double(double v) {
  mpfr_set_prec(raw(a_), 53);
  mpfr_set_d(raw(a_), v, MPFR_RNDN);
  return a_;
}

// g_i = gamma_i dy_i is exact in double (48 bits). Sg and G are exact sums
// (precisions from the exponents, as in prepare()); M_i is exact by
// construction (exact_*). dx_i, first attempt: RN(M_i RN(c / N)), relative
// (1 + 2u)(1 + u)(1 + u) - 1 <= 4.01u of dx, so < 2^(EXP + 3 - p); later
// attempts: signed_sqrt_ratio(M_i, d, N^3), exact whenever dx is dyadic.
void NormRow::backward(std::span<const float> dy, std::span<const float> gamma) {
  const int64_t d = d_;
  dy_finite = all_finite(dy);
  long egmax = LONG_MIN, glow = LONG_MAX;
  auto g_at = [&](int64_t i) {
    return gamma.empty() ? double{dy[i]} : double{gamma[i]} * double{dy[i]};
  };
  for (int64_t i = 0; i < d; ++i) {
    const double g = g_at(i);
    if (!std::isfinite(g) || g == 0) continue;
    int e;
    std::frexp(g, &e);
    egmax = std::max<long>(egmax, e);
    glow = std::min<long>(glow, e - 48);
  }
  if (egmax == LONG_MIN) egmax = glow = 0;
  const long L = log2_ceil(d);
  mpfr_set_prec(raw(sum_g), at_least_min(egmax + L - glow + 2));
  mpfr_set_prec(raw(sum_g_dev),
                at_least_min(egmax + dev_exp_max_ + L - (glow + dev_low_) + 2));
  mpfr_set_zero(raw(sum_g), 1);
  mpfr_set_zero(raw(sum_g_dev), 1);
  // The scales mean|g| and mean|g xhat| (= c sum|g D| / d), at start_bits.
  mpfr_set_prec(raw(work_), start_bits_);
  mpfr_set_prec(raw(work2_), start_bits_);
  mpfr_set_zero(raw(work_), 1);
  mpfr_set_zero(raw(work2_), 1);
  // b_ holds each |g_i D_i|, rounded to start_bits like the sums (its
  // precision is whatever the exact scratch last needed)
  mpfr_set_prec(raw(b_), start_bits_);
  for (int64_t i = 0; i < d; ++i) {
    const Real& g = a_from_double(g_at(i));
    require_exact(mpfr_add(raw(sum_g), raw(sum_g), raw(g), MPFR_RNDN));
    require_exact(mpfr_fma(raw(sum_g_dev), raw(g), raw(dev[i]), raw(sum_g_dev), MPFR_RNDN));
    mpfr_add_d(raw(work_), raw(work_), std::fabs(g_at(i)), MPFR_RNDN);
    mpfr_mul(raw(b_), raw(g), raw(dev[i]), MPFR_RNDN);
    mpfr_abs(raw(b_), raw(b_), MPFR_RNDN);
    mpfr_add(raw(work2_), raw(work2_), raw(b_), MPFR_RNDN);
  }
  mean_abs_g = mpfr_get_d(raw(work_), MPFR_RNDN) / static_cast<double>(d);
  bool c_exact;
  mpfr_mul(raw(work2_), raw(work2_), raw(c_at(start_bits_, c_exact)), MPFR_RNDN);
  mpfr_div_si(raw(work2_), raw(work2_), static_cast<long>(d), MPFR_RNDN);
  mean_abs_g_xhat = mpfr_get_d(raw(work2_), MPFR_RNDN);

  if (!finite || !dy_finite) {  // docs/semantics.md: the whole dx row is NaN
    for (int64_t i = 0; i < d; ++i) dx[i] = {NAN, NAN};
    bits_used = start_bits_;
    return;
  }
  // M_i = (k g_i - [LayerNorm] Sg) N - k D_i G, exactly.
  exact_mul(k_G_, k_, sum_g_dev);
  for (int64_t i = 0; i < d; ++i) {
    exact_mul(k_g_, k_, a_from_double(g_at(i)));
    if (norm_ == Norm::layer)
      exact_sub(e_, k_g_, sum_g);
    else
      mpfr_swap(raw(e_), raw(k_g_));
    exact_mul(b_, e_, norm_sq);
    exact_mul(e_, dev[i], k_G_);
    exact_sub(dx_num[i], b_, e_);
  }
  pending_.assign(d, 1);
  for (unsigned p = start_bits_;; p *= 2) {
    if (p > kZivCapBits) undecided();
    bits_used = p;
    bool c_exact_p;
    const Real& c = c_at(p, c_exact_p);
    mpfr_set_prec(raw(work_), p);
    mpfr_set_prec(raw(work2_), p);
    const bool first = p == start_bits_;
    bool w_exact = false;
    if (first) {
      w_exact = mpfr_div(raw(work2_), raw(c), raw(norm_sq), MPFR_RNDN) == 0 && c_exact_p;
    } else if (p == 2 * start_bits_) {
      exact_mul(b_, norm_sq, norm_sq);
      exact_mul(n3_, b_, norm_sq);
    }
    bool open = false;
    for (int64_t i = 0; i < d; ++i) {
      if (!pending_[i]) continue;
      const bool exact =
          first ? mpfr_mul(raw(work_), raw(dx_num[i]), raw(work2_), MPFR_RNDN) == 0 && w_exact  // 0 x inf = NaN
                : signed_sqrt_ratio(work_, dx_num[i], static_cast<long>(d), n3_, b_, e_);
      open |= (pending_[i] = !decider_.decide(work_, within(work_, exact, 3, p), dx[i]));
    }
    if (!open) return;
  }
}

}  // namespace normcheck::mp
