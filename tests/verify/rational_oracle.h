// An independent oracle for the reference: every output of LayerNorm/RMSNorm
// on float inputs has the form a sqrt(b) + c with exact rationals a, b >= 0,
// c computed here from the definitions (docs/semantics.md), not from the
// reference's identities; and `rounds_to` decides with exact rational
// comparisons whether a float or double is its correct rounding (to nearest,
// ties to even, subnormals, +-inf past the overflow boundary).
// Heavy (GMP through Boost): include it only in test_reference_mp's sources.
#pragma once

#include <bit>
#include <boost/multiprecision/gmp.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace normcheck::test {

using Rational = boost::multiprecision::mpq_rational;

inline Rational exact(double v) {
  Rational q;
  mpq_set_d(q.backend().data(), v);  // a double (or float) is a dyadic rational: exact
  return q;
}

inline int sign(const Rational& q) { return q > 0 ? 1 : q < 0 ? -1 : 0; }

// a sqrt(b) + c, b >= 0.
struct SqrtForm {
  Rational a, b = 1, c;
};

// sign(v - t): compares a sqrt(b) with w = t - c by signs, then by squares.
inline int compare(const SqrtForm& v, const Rational& t) {
  const Rational w = t - v.c;
  const int sa = v.b == 0 ? 0 : sign(v.a), sw = sign(w);
  if (sa != sw) return sa > sw ? 1 : -1;
  if (sa == 0) return 0;
  const Rational lhs = v.a * v.a * v.b, rhs = w * w;
  const int magnitude = lhs > rhs ? 1 : lhs < rhs ? -1 : 0;
  return sa > 0 ? magnitude : -magnitude;
}

// True when f is v rounded to nearest-even in F's format: v lies between the
// midpoints to f's neighbours (a midpoint itself when f's significand is
// even); +-inf when |v| reaches max + spacing/2; a zero's sign is v's.
template <class F>
bool rounds_to(const SqrtForm& v, F f) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr F kMax = std::numeric_limits<F>::max();
  constexpr F kInf = std::numeric_limits<F>::infinity();
  if (std::isnan(f)) return false;
  const Rational overflow = exact(kMax) + (exact(kMax) - exact(std::nextafter(kMax, F(0)))) / 2;
  if (std::isinf(f)) return f > 0 ? compare(v, overflow) >= 0 : compare(v, -overflow) <= 0;
  const F below = std::nextafter(f, -kInf), above = std::nextafter(f, kInf);
  const Rational lo = std::isinf(below) ? Rational(-overflow) : Rational((exact(f) + exact(below)) / 2);
  const Rational hi = std::isinf(above) ? overflow : Rational((exact(f) + exact(above)) / 2);
  const bool even = (std::bit_cast<Bits>(f) & 1) == 0;
  const int from_lo = compare(v, lo), from_hi = compare(v, hi);
  if (even ? (from_lo < 0 || from_hi > 0) : (from_lo <= 0 || from_hi >= 0)) return false;
  if (f == 0) {
    const int s = compare(v, 0);
    if (s != 0 && (s < 0) != std::signbit(f)) return false;
  }
  return true;
}

// One row from the definitions: mu = mean(x), var = mean((x - mu)^2)
// (RMSNorm: mean(x^2), no centring), b = 1/(var + eps), r = sqrt(b).
// Requires finite x; the forms need var + eps > 0.
class ExactRow {
 public:
  ExactRow(std::span<const float> x, float eps, bool layer) : layer_(layer) {
    const long d = static_cast<long>(x.size());
    for (float v : x) x_.push_back(exact(v));
    for (const auto& v : x_) mu_ += v;
    mu_ /= d;
    for (const auto& v : x_) var_ += centred_sq(v);
    var_ /= d;
    if (var_ + exact(eps) != 0) b_ = 1 / (var_ + exact(eps));
  }

  SqrtForm mean() const { return {0, 1, mu_}; }
  SqrtForm r() const { return {1, b_, 0}; }
  SqrtForm xhat(std::size_t i) const { return {centred(i), b_, 0}; }
  SqrtForm y(std::size_t i, float gamma, float beta) const {
    return {exact(gamma) * centred(i), b_, exact(beta)};
  }
  // dx = r (g - mean(g) - xhat mean(g xhat)) = sqrt(b) (g - mean(g) - b (x - mu) mean(g (x - mu)))
  // (RMSNorm: without mean(g) and mu); g = gamma dy.
  std::vector<SqrtForm> dx(std::span<const Rational> g) const {
    const long d = static_cast<long>(g.size());
    Rational mean_g = 0, mean_g_centred = 0;
    for (std::size_t j = 0; j < g.size(); ++j) {
      mean_g += g[j];
      mean_g_centred += g[j] * centred(j);
    }
    mean_g /= d;
    mean_g_centred /= d;
    const Rational b_mean_g_centred = b_ * mean_g_centred;
    std::vector<SqrtForm> out;
    for (std::size_t i = 0; i < g.size(); ++i)
      out.push_back({g[i] - (layer_ ? mean_g : Rational(0)) - centred(i) * b_mean_g_centred, b_, 0});
    return out;
  }
  const Rational& variance() const { return var_; }

 private:
  Rational centred(std::size_t i) const { return layer_ ? Rational(x_[i] - mu_) : x_[i]; }
  Rational centred_sq(const Rational& v) const {
    const Rational c = layer_ ? Rational(v - mu_) : v;
    return c * c;
  }

  bool layer_;
  std::vector<Rational> x_;
  Rational mu_ = 0, var_ = 0, b_ = 0;
};

}  // namespace normcheck::test
