// The exact forward of an op spec (spec_reference.h), row by row.
//
// Exact part (MPFR at the precision each result needs, nothing rounds), with
// s the norm's input (x, or x + residual, rounded at `sum` under a policy
// that rounds there) and k = d (LayerNorm) or 1 (RMSNorm):
//   S = sum s_i,  D_i = k s_i - S (LayerNorm) or s_i (RMSNorm),
//   V = sum D_i^2 + eps k^2 d,
// so that sigma^2 + eps (LayerNorm; mean(s^2) + eps for RMSNorm) = V / (k^2 d),
//   mean = S / d,   r = sqrt(k^2 d / V),   xhat_i = (s_i - mean) r = sign(D_i) sqrt(D_i^2 d / V).
// Interval part at working precision P (each operation rounded outward, so
// [lo, hi] holds the real value): r and xhat_i each from one quotient of
// exact values and one square root, so that a dyadic result (the only kind
// that can be a rounding tie) comes out as a point interval; w_i xhat_i the
// same way, sign(D_i w_i) sqrt(D_i^2 w_i^2 d / V) (or D_i rho w_i / k), since
// it can be dyadic where xhat_i is not (w_i a multiple of 3 and k = 3),
// unless xhat_i is rounded, when it is a point and the product is exact. Under the policy:
//   rho = round_r(r); xhat_i = D_i rho / k   (when the spec rounds at r)
//   xhat_i -> round_xhat(xhat_i); w_i = gamma_i or 1 + gamma_i (exact) -> round_weight(w_i)
//   scaled_i = w_i xhat_i -> round_scaled(scaled_i);  y_i = scaled_i + beta_i.
// A non-dyadic rational or irrational value is never a tie, and a dyadic one
// is a point: every rounding (a rounding point, or an output's rounding to
// double and to its dtype) is decided once the interval is narrow enough,
// and P doubles until it is.
//
// Most rows never reach the interpreter: the fast phase
// (spec_reference_fast.h) decides the rows whose values the float
// references decide.
#include "normcheck/spec_reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "normcheck/float_format.h"
#include "reference_mp.h"
#include "spec_reference_fast.h"

namespace normcheck {
namespace {

using mp::make_real;
using mp::raw;
using mp::Real;

constexpr unsigned kStartBits = 128;

// The correct rounding of v (exact) to format f, as a double (which holds
// every value of float32, bf16 and f16): to nearest, ties to even, gradual
// underflow, +-inf past the overflow boundary. tmp: scratch.
double round_to_format(const FloatFormat& f, mpfr_srcptr v, Real& tmp) {
  if (!mpfr_regular_p(v)) return mpfr_get_d(v, MPFR_RNDN);  // 0, inf, NaN: themselves
  const mpfr_exp_t binade = mpfr_get_exp(v) - 1;           // v in [2^binade, 2^(binade + 1))
  if (binade >= f.min_exp) {
    mpfr_set_prec(raw(tmp), f.precision);
    mpfr_set(raw(tmp), v, MPFR_RNDN);  // p bits, the exponent unbounded: overflow is checked below
  } else {
    // below the normal range: the nearest multiple of the subnormal spacing 2^q
    const long q = f.min_exp - f.precision + 1;
    mpfr_set_prec(raw(tmp), mpfr_get_prec(v));
    mpfr_mul_2si(raw(tmp), v, -q, MPFR_RNDN);  // exact: a power of two
    mpfr_rint(raw(tmp), raw(tmp), MPFR_RNDN);  // nearest integer, ties to even
    mpfr_mul_2si(raw(tmp), raw(tmp), q, MPFR_RNDN);
  }
  const double r = mpfr_get_d(raw(tmp), MPFR_RNDN);  // exact: a value of f
  return std::fabs(r) > f.largest_finite() ? std::copysign(INFINITY, r) : r;
}

bool same(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) || (a == 0 && b == 0);
}

// An interval of reals at the working precision.
struct Interval {
  Real lo, hi;
  void set_prec(mpfr_prec_t p) {
    mpfr_set_prec(raw(lo), p);
    mpfr_set_prec(raw(hi), p);
  }
};

class RowInterpreter {
 public:
  RowInterpreter(const OpSpec& spec, SpecResult which) : spec_(spec), policy_(which == SpecResult::policy) {}

  // One row: the exact part once, then the interval part until decided.
  void run(const SpecInputs& in, int64_t row, SpecForwardReference& out) {
    const auto d = static_cast<std::size_t>(in.cols);
    const std::size_t base = static_cast<std::size_t>(row) * d;
    if (!finite_row(in, base, d) || !stored_sums_finite(in, base, d, out)) {
      mark_nonfinite(out, row, d);
      if (spec_.add)  // the sum itself is the extended-real sum, element by element
        for (std::size_t i = 0; i < d; ++i) sum_of(in, base + i, out);
      return;
    }
    exact_part(in, base, d, out);
    for (unsigned bits = kStartBits;; bits *= 2) {
      if (interval_part(in, row, base, d, bits, out)) {
        out.bits_used = std::max(out.bits_used, bits);
        return;
      }
      if (bits >= mp::kZivCapBits)
        throw std::runtime_error("normcheck spec reference: a rounding stayed undecided at " +
                                 std::to_string(bits) + " bits");
    }
  }

 private:
  const FloatFormat& format(TensorName t) const { return formats_[static_cast<int>(spec_.dtype_of(t))]; }
  std::optional<FloatFormat> rounding(RoundingPoint p) const {
    if (!policy_) return std::nullopt;
    const std::optional<DType> t = spec_.rounding_at(p);
    return t ? std::optional(float_format(*t)) : std::nullopt;
  }

  // Every input of the norm finite: x and residual. A non-finite gamma or
  // beta touches only its own column, through IEEE arithmetic on the exact
  // xhat (docs/semantics.md).
  static bool finite_row(const SpecInputs& in, std::size_t base, std::size_t d) {
    for (std::size_t i = 0; i < d; ++i) {
      if (!std::isfinite(in.x[base + i])) return false;
      if (!in.residual.empty() && !std::isfinite(in.residual[base + i])) return false;
    }
    return true;
  }

  // Under a policy that rounds at `sum`: every stored sum finite. A sum past
  // its format's range is +-inf there (round_to_format), and the norm's input
  // holds that infinity: a row with a non-finite input of the norm, as one
  // whose x or residual is non-finite.
  bool stored_sums_finite(const SpecInputs& in, std::size_t base, std::size_t d, SpecForwardReference& out) {
    const std::optional<FloatFormat> at_sum = rounding(RoundingPoint::sum);
    if (!spec_.add || !at_sum) return true;
    for (std::size_t i = 0; i < d; ++i)
      if (std::isinf(round_to_format(*at_sum, raw(sum_of(in, base + i, out)), tmp_))) return false;
    return true;
  }

  static void mark_nonfinite(SpecForwardReference& out, int64_t row, std::size_t d) {
    const std::size_t r = static_cast<std::size_t>(row), base = r * d;
    out.finite[r] = 0;
    for (SpecValues* v : {&out.mean, &out.stat})
      if (!v->exact.empty()) v->exact[r] = v->rounded[r] = NAN;
    for (std::size_t i = base; i < base + d; ++i) {
      out.y.exact[i] = out.y.rounded[i] = out.xhat[i] = NAN;
    }
  }

  void exact_part(const SpecInputs& in, std::size_t base, std::size_t d, SpecForwardReference& out) {
    if (s_.size() < d) {
      s_.resize(d, make_real(64));
      dev_.resize(d, make_real(64));
      dev_sq_d_.resize(d, make_real(64));
    }
    const bool layer = spec_.norm == NormKind::layernorm;
    const long k = layer ? static_cast<long>(d) : 1;
    mpfr_set_prec(raw(sum_), 64);
    mpfr_set_zero(raw(sum_), 1);
    for (std::size_t i = 0; i < d; ++i) {
      Real& s = s_[i];
      if (spec_.add) {
        mpfr_set_prec(raw(s), mpfr_get_prec(raw(sum_of(in, base + i, out))));
        mpfr_set(raw(s), raw(t_), MPFR_RNDN);  // exact: the same precision
        if (const auto at_sum = rounding(RoundingPoint::sum)) set_exact(s, round_to_format(*at_sum, raw(s), tmp_));
      } else {
        set_exact(s, in.x[base + i]);
      }
      mp::exact_add(t_, sum_, s);
      std::swap(t_, sum_);
    }
    // D_i, and V = sum D_i^2 + eps k^2 d
    mpfr_set_prec(raw(v_), 64);
    mpfr_set_zero(raw(v_), 1);
    for (std::size_t i = 0; i < d; ++i) {
      if (layer) {
        set_exact(a_, static_cast<double>(k));
        mp::exact_mul(b_, a_, s_[i]);
        mp::exact_sub(dev_[i], b_, sum_);
      } else {
        mpfr_set_prec(raw(dev_[i]), mpfr_get_prec(raw(s_[i])));
        mpfr_set(raw(dev_[i]), raw(s_[i]), MPFR_RNDN);
      }
      mp::exact_mul(a_, dev_[i], dev_[i]);
      mp::exact_add(t_, v_, a_);
      std::swap(t_, v_);
      set_exact(b_, static_cast<double>(d));
      mp::exact_mul(dev_sq_d_[i], a_, b_);  // D_i^2 d
    }
    set_exact(kkd_, static_cast<double>(k) * static_cast<double>(k) * static_cast<double>(d));  // < 2^53 for d < 2^17
    set_exact(a_, in.eps);
    mp::exact_mul(b_, a_, kkd_);
    mp::exact_add(t_, v_, b_);
    std::swap(t_, v_);
    k_ = k;
    condition(in, d, out.condition[base / d], out.mean_abs_s[base / d]);
  }

  // The row's condition from the exact s and V, in 64-bit arithmetic: each
  // figure within a few 2^-64 relative, rounded once more to double.
  void condition(const SpecInputs& in, std::size_t d, RowCondition& c, double& mean_abs) {
    mpfr_set_prec(raw(a_), 64);
    mpfr_set_prec(raw(b_), 64);
    mpfr_set_zero(raw(a_), 1);
    mpfr_set_zero(raw(b_), 1);  // max |s|
    for (std::size_t i = 0; i < d; ++i) {
      mpfr_set_prec(raw(tmp_), mpfr_get_prec(raw(s_[i])));
      mpfr_abs(raw(tmp_), raw(s_[i]), MPFR_RNDN);  // exact at s_i's precision
      mpfr_add(raw(a_), raw(a_), raw(tmp_), MPFR_RNDN);
      if (mpfr_cmp(raw(tmp_), raw(b_)) > 0) mpfr_set(raw(b_), raw(tmp_), MPFR_RNDN);
    }
    mpfr_set_prec(raw(t_), 64);
    mpfr_div(raw(t_), raw(kkd_), raw(v_), MPFR_RNDN);
    mpfr_sqrt(raw(t_), raw(t_), MPFR_RNDN);  // r; +inf when V = 0
    const double r = mpfr_get_d(raw(t_), MPFR_RNDN);
    c.d = static_cast<int64_t>(d);
    c.rows = 1;
    c.r = r;
    mean_abs = mpfr_get_d(raw(a_), MPFR_RNDN) / static_cast<double>(d);
    c.kappa = mean_abs * r;
    c.max_kappa = mpfr_get_d(raw(b_), MPFR_RNDN) * r;
    c.eps_share = std::isinf(r) ? 0 : static_cast<double>(in.eps) * r * r;  // 0 * inf: the ill-posed row
    if (std::isnan(c.kappa)) c.kappa = 0;
    if (std::isnan(c.max_kappa)) c.max_kappa = 0;
  }

  // x_i + residual_i exactly (in the extended reals) into t_, and its
  // roundings into residual_out. Returns t_.
  const Real& sum_of(const SpecInputs& in, std::size_t i, SpecForwardReference& out) {
    mpfr_set_prec(raw(a_), 24);
    mpfr_set_flt(raw(a_), in.x[i], MPFR_RNDN);
    mpfr_set_prec(raw(b_), 24);
    mpfr_set_flt(raw(b_), in.residual[i], MPFR_RNDN);
    mp::exact_add(t_, a_, b_);
    out.residual_out.exact[i] = mpfr_get_d(raw(t_), MPFR_RNDN);
    out.residual_out.rounded[i] = round_to_format(format(TensorName::residual_out), raw(t_), tmp_);
    return t_;
  }

  // v = x exactly (x a double).
  static void set_exact(Real& v, double x) {
    mpfr_set_prec(raw(v), 53);
    mpfr_set_d(raw(v), x, MPFR_RNDN);
  }

  // [num / den]^(1/2) outward at `bits`, negated when `negate` (num >= 0, den >= 0).
  void sqrt_quotient(Interval& out, const Real& num, const Real& den, unsigned bits, bool negate) {
    out.set_prec(bits);
    mpfr_div(raw(out.lo), raw(num), raw(den), MPFR_RNDD);
    mpfr_div(raw(out.hi), raw(num), raw(den), MPFR_RNDU);
    mpfr_sqrt(raw(out.lo), raw(out.lo), MPFR_RNDD);
    mpfr_sqrt(raw(out.hi), raw(out.hi), MPFR_RNDU);
    if (negate) {
      mpfr_swap(raw(out.lo), raw(out.hi));
      mpfr_neg(raw(out.lo), raw(out.lo), MPFR_RNDN);
      mpfr_neg(raw(out.hi), raw(out.hi), MPFR_RNDN);
    }
  }

  // Rounds [lo, hi] to format f when both ends round alike: the interval
  // becomes that point. False when they do not.
  bool round_interval(Interval& v, const FloatFormat& f) {
    const double lo = round_to_format(f, raw(v.lo), tmp_), hi = round_to_format(f, raw(v.hi), tmp_);
    if (!same(lo, hi)) return false;
    mpfr_set_prec(raw(v.lo), 64);
    mpfr_set_prec(raw(v.hi), 64);
    mpfr_set_d(raw(v.lo), lo, MPFR_RNDN);
    mpfr_set_d(raw(v.hi), lo, MPFR_RNDN);
    return true;
  }

  // The decided double and dtype roundings of [lo, hi], or false.
  bool decide(const Interval& v, const FloatFormat& f, double& exact, double& rounded) {
    const double lo = mpfr_get_d(raw(v.lo), MPFR_RNDN), hi = mpfr_get_d(raw(v.hi), MPFR_RNDN);
    if (!same(lo, hi)) return false;
    const double f_lo = round_to_format(f, raw(v.lo), tmp_), f_hi = round_to_format(f, raw(v.hi), tmp_);
    if (!same(f_lo, f_hi)) return false;
    exact = lo;
    rounded = f_lo;
    return true;
  }

  // w [lo, hi] outward, w a point.
  static void scale(Interval& v, const Real& w, unsigned bits, Interval& scratch) {
    scratch.set_prec(bits);
    const bool negative = mpfr_sgn(raw(w)) < 0;
    mpfr_mul(raw(scratch.lo), raw(negative ? v.hi : v.lo), raw(w), MPFR_RNDD);
    mpfr_mul(raw(scratch.hi), raw(negative ? v.lo : v.hi), raw(w), MPFR_RNDU);
    std::swap(v, scratch);
  }

  bool interval_part(const SpecInputs& in, int64_t row, std::size_t base, std::size_t d, unsigned bits,
                     SpecForwardReference& out) {
    const auto r_index = static_cast<std::size_t>(row);
    const bool layer = spec_.norm == NormKind::layernorm;
    if (layer) {
      Interval mean;
      mean.set_prec(bits);
      set_exact(a_, static_cast<double>(d));
      mpfr_div(raw(mean.lo), raw(sum_), raw(a_), MPFR_RNDD);
      mpfr_div(raw(mean.hi), raw(sum_), raw(a_), MPFR_RNDU);
      if (!decide(mean, format(TensorName::mean), out.mean.exact[r_index], out.mean.rounded[r_index])) return false;
    }
    // r = sqrt(k^2 d / V); V = 0 (a constant row, eps = 0): r = +inf and xhat = 0 * inf = NaN
    sqrt_quotient(r_, kkd_, v_, bits, false);
    const std::optional<FloatFormat> at_r = rounding(RoundingPoint::r);
    if (at_r && !round_interval(r_, *at_r)) return false;
    if (!decide(r_, format(TensorName::stat), out.stat.exact[r_index], out.stat.rounded[r_index])) return false;

    for (std::size_t i = 0; i < d; ++i) {
      Interval& xhat = xhat_;
      if (at_r) {
        // xhat_i = D_i rho / k: exact product, one outward quotient
        mp::exact_mul(a_, dev_[i], r_.lo);
        set_exact(b_, static_cast<double>(k_));
        xhat.set_prec(bits);
        mpfr_div(raw(xhat.lo), raw(a_), raw(b_), MPFR_RNDD);
        mpfr_div(raw(xhat.hi), raw(a_), raw(b_), MPFR_RNDU);
      } else {
        sqrt_quotient(xhat, dev_sq_d_[i], v_, bits, mpfr_sgn(raw(dev_[i])) < 0);
        if (mpfr_zero_p(raw(v_))) {  // 0/0 (docs/semantics.md): the ill-posed constant row
          mpfr_set_nan(raw(xhat.lo));
          mpfr_set_nan(raw(xhat.hi));
        }
      }
      const std::optional<FloatFormat> at_xhat = rounding(RoundingPoint::xhat);
      if (at_xhat && !round_interval(xhat, *at_xhat)) return false;
      const double xhat_lo = mpfr_get_d(raw(xhat.lo), MPFR_RNDN);
      if (!same(xhat_lo, mpfr_get_d(raw(xhat.hi), MPFR_RNDN))) return false;
      out.xhat[base + i] = xhat_lo;
      // the weight: gamma_i, 1 + gamma_i, or 1; exact, then rounded where the policy says
      const float g = in.gamma.empty() ? (spec_.weight == Weight::one_plus_gamma ? 0.0f : 1.0f) : in.gamma[i];
      set_exact(w_, g);
      if (spec_.weight == Weight::one_plus_gamma) {
        set_exact(a_, 1.0);
        mp::exact_add(b_, a_, w_);
        std::swap(b_, w_);
      }
      if (spec_.weight == Weight::none) set_exact(w_, 1.0);
      if (const auto at_w = rounding(RoundingPoint::weight)) set_exact(w_, round_to_format(*at_w, raw(w_), tmp_));
      // w xhat: a rounded xhat is a point, whose product with w is exact at
      // `bits`; otherwise from exact values in one quotient (and one root), as
      // xhat itself, so that a dyadic w xhat (a possible tie) is a point even
      // where xhat is not (w a multiple of 3 and xhat = D rho / 3, say)
      if (at_xhat) {
        scale(xhat, w_, bits, scratch_);
      } else if (at_r) {
        mp::exact_mul(a_, dev_[i], r_.lo);
        mp::exact_mul(b_, a_, w_);
        set_exact(a_, static_cast<double>(k_));
        xhat.set_prec(bits);
        mpfr_div(raw(xhat.lo), raw(b_), raw(a_), MPFR_RNDD);
        mpfr_div(raw(xhat.hi), raw(b_), raw(a_), MPFR_RNDU);
      } else {
        // sign(D_i w) sqrt(D_i^2 d w^2 / V); 0/0 and 0 inf are NaN, as IEEE's w xhat
        mp::exact_mul(a_, w_, w_);
        mp::exact_mul(b_, dev_sq_d_[i], a_);
        sqrt_quotient(xhat, b_, v_, bits, (mpfr_sgn(raw(dev_[i])) < 0) != (mpfr_sgn(raw(w_)) < 0));
        if (mpfr_zero_p(raw(v_)) || mpfr_nan_p(raw(w_))) {
          mpfr_set_nan(raw(xhat.lo));
          mpfr_set_nan(raw(xhat.hi));
        }
      }
      if (const auto at_scaled = rounding(RoundingPoint::scaled); at_scaled && !round_interval(xhat, *at_scaled))
        return false;
      if (!in.beta.empty()) {
        set_exact(a_, in.beta[i]);
        scratch_.set_prec(bits);
        mpfr_add(raw(scratch_.lo), raw(xhat.lo), raw(a_), MPFR_RNDD);
        mpfr_add(raw(scratch_.hi), raw(xhat.hi), raw(a_), MPFR_RNDU);
        std::swap(xhat, scratch_);
      }
      if (!decide(xhat, format(TensorName::y), out.y.exact[base + i], out.y.rounded[base + i])) return false;
    }
    return true;
  }

  const OpSpec& spec_;
  const bool policy_;
  const FloatFormat formats_[3] = {float_format(DType::f32), float_format(DType::bf16), float_format(DType::f16)};
  std::vector<Real> s_, dev_, dev_sq_d_;  // per element: the norm's input, D_i, D_i^2 d (exact)
  Real sum_ = make_real(64), v_ = make_real(64), kkd_ = make_real(64);
  long k_ = 1;
  Real a_ = make_real(64), b_ = make_real(64), t_ = make_real(64), w_ = make_real(64), tmp_ = make_real(64);
  Interval r_{make_real(64), make_real(64)}, xhat_{make_real(64), make_real(64)},
      scratch_{make_real(64), make_real(64)};
};

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("spec_reference_fwd: " + what);
}

}  // namespace

SpecForwardReference spec_reference_fwd(const OpSpec& spec, const SpecInputs& in, SpecResult which,
                                        SpecPhases phases) {
  const std::string error = spec_error(spec);
  require(error.empty(), error);
  require(spec.direction == Direction::fwd && !spec.linear, std::string("not a forward norm spec: ") + to_text(spec));
  require(in.rows >= 0 && in.cols >= 1, "rows >= 0 and cols >= 1");
  require(in.cols <= kSpecReferenceMaxCols, "cols below 2^17 (k^2 d is formed in a double)");
  const auto n = static_cast<std::size_t>(in.rows * in.cols), d = static_cast<std::size_t>(in.cols);
  require(in.x.size() == n, "x holds rows x cols values");
  require(spec.add ? in.residual.size() == n : in.residual.empty(), "residual holds rows x cols values with 'add', none without");
  require(in.gamma.empty() || (spec.weight != Weight::none && in.gamma.size() == d), "gamma holds cols values (and the spec has a weight)");
  require(in.beta.empty() || (spec.bias && in.beta.size() == d), "beta holds cols values (and the spec has a bias)");

  SpecForwardReference out;
  const auto rows = static_cast<std::size_t>(in.rows);
  if (spec.add) out.residual_out = {std::vector<double>(n), std::vector<double>(n)};
  if (spec.norm == NormKind::layernorm) out.mean = {std::vector<double>(rows), std::vector<double>(rows)};
  out.stat = {std::vector<double>(rows), std::vector<double>(rows)};
  out.finite.assign(rows, 1);
  out.condition.assign(rows, RowCondition{});
  out.mean_abs_s.assign(rows, 0);
  out.s_stats.assign(rows, RowStats{});
  out.s_stats_known.assign(rows, 0);
  std::vector<char> decided(rows, 0);
  if (phases == SpecPhases::fast_then_exact) detail::spec_reference_fast(spec, in, which, out, decided);
  if (out.y.exact.size() != n) {  // y and xhat, unless the fast phase sized them (spec_reference_fast.h)
    out.y = {std::vector<double>(n), std::vector<double>(n)};
    out.xhat.assign(n, 0);
  }
  RowInterpreter interpreter(spec, which);
  for (int64_t row = 0; row < in.rows; ++row)
    if (!decided[static_cast<std::size_t>(row)]) interpreter.run(in, row, out);
  return out;
}

}  // namespace normcheck
