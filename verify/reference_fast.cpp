// The fast phase of the exact forward references (reference_fast.h).
//
// Exact part. Every finite non-zero float is m 2^p with an integer |m| < 2^24
// and p >= -149. With low = min p over the row's non-zero elements and
// top = max (p + 24), every x_i = m_i 2^low with an integer |m_i| < 2^B,
// B = top - low. With k = d (LayerNorm) or 1 (RMSNorm) and L = ceil(log2 d):
//   S = sum m_i        |S| < 2^(B + L)
//   A = sum |m_i|      (for mean|x|)
//   D_i = k m_i - S    |D_i| < 2^(B + L + 1)   (RMSNorm: D_i = m_i)
// all exact in int64 when B + L + 1 <= 62, else in __int128 when
// B + L + 1 <= 126 (otherwise the row goes to MPFR). These are the numerators
// of reference_mp.h scaled by 2^-low: mean = S 2^low / d, N = N0 + E with
// N0 = sum D_i^2 and E = eps k^2 d 2^(-2 low), r = k sqrt(d / N) 2^(-low),
// xhat_i = D_i sqrt(d / N), variance = N0 2^(2 low) / (k^2 d), eps share E / N.
//
// Rounded part, in double-double (a pair h + l with |l| <= ulp(h)/2, so h is
// the double nearest h + l). u = 2^-53. Each operation's relative error
// (derived at its definition below; inputs within their own bounds):
//   to_dd(integer)          <= 1.01 u^2   (exact below 2^53)
//   mul(x, y)               <= 7.04 u^2, used as 8 u^2
//   add of two sums of non-negative terms: absolute <= 3.01 u^2 (s + t)
//   add_double(x, b)        absolute <= 2.01 u^2 (|x| + |b|), used as 4
//   div(a, b)               <= 23.7 u^2, used as 32 u^2
//   sqrt(x)                 <= 7.7 u^2, used as 10 u^2 (plus half x's)
// Propagated (relative errors add, to first order):
//   rho_D    = 2 u^2 (to_dd)
//   rho_N0   = 2 u^2 when N0 is summed exactly in __int128 (2 W + L <= 126,
//              W = B + L + 1 the bits of |D_i|) and converted once; otherwise
//              (3.01 d + 10.1) u^2, used as (4 d + 16) u^2: d - 1 additions of
//              non-negative terms each adding 3.01 u^2 of a partial sum <= N0,
//              and each term D^2 within 8 + 2 * 1.01 u^2
//   rho_E    = 8 u^2 (eps times k^2 d, exact as a double-double for d <= 2^24)
//   rho_N    = max(rho_N0, rho_E) + 4 u^2
//   rho_c    = (rho_N + 32 u^2) / 2 + 10 u^2        c = sqrt(d / N)
//   rho_r    = rho_c + 8 u^2;  rho_xhat = rho_D + rho_c + 8 u^2
//   y = gamma xhat + beta: rho_xhat + 8 u^2 of |gamma xhat|, plus
//              4 u^2 (|gamma xhat| + |beta|) (absolute: y may cancel)
//   mean, mean|x|: 2 u^2 + 32 u^2; variance rho_N0 + 32 u^2;
//   eps share rho_E + rho_N + 32 u^2.
// Exact dyadic values are rounded exactly instead (exact_roundings): the mean
// when d divides S or d is a power of two, mean|x| and the variance when d is
// a power of two; each only when its double-double holds the integer exactly
// (checked). Such values are often float or double midpoints, which no error
// bound decides.
// Every relative bound here stays below 2^-70 (d <= 2^24), so the products of
// two of them that the first-order sums leave out, and the roundings of the
// few double operations that compute the bounds, are below 2^-20 of the sum:
// each absolute bound is rho |h| (1 + 2^-20), |h + l| <= |h| (1 + u) included.
//
// Range. The proofs of two_prod (fma) and of the bounds above need every
// product's error to be representable: no double below 2^-900 or above
// 2^900 anywhere. Scaled by 2^-low the row's values are integers below
// 2^126, N < 2^277 (+ E < 2^546), c in [2^-274, 2^12], outputs at least
// 2^-500; every product checks its magnitude anyway (`in_range`) and the row
// goes to MPFR if one leaves the range.
//
// Decision. v = h + l approximates a real t with |t - v| <= e. With
// m >= e + |l| (rounded upwards), t lies in (h - m, h + m); when that interval
// lies strictly inside h's double rounding interval (half the gaps to h's
// neighbours) t's double is h; when it lies strictly inside the rounding
// interval of f = float(h) (its midpoints with the float neighbours: exact
// doubles; 2^128 - 2^103 is where float rounding overflows), t's float is f,
// and f is float(h) because h is not a float midpoint (the interval would
// hold it). An interval on a boundary is undecided: exact ties (dyadic
// outputs) always go to MPFR, which recognises them exactly. A zero h is
// undecided (signs of zero follow MPFR's rules there).
#include "reference_fast.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace normcheck::fast {
namespace {

[[gnu::always_inline]] inline long log2_ceil(int64_t d) {
  return d <= 1 ? 0 : 64 - std::countl_zero(static_cast<uint64_t>(d - 1));
}

// m 2^p of a finite non-zero float (|m| < 2^24).
struct FloatParts {
  int32_t m;
  int p;
};
[[gnu::always_inline]] inline FloatParts parts(float f) {
  const uint32_t b = std::bit_cast<uint32_t>(f);
  const int e = static_cast<int>((b >> 23) & 0xff);
  int32_t m = static_cast<int32_t>(b & 0x7fffff);
  int p = -149;
  if (e != 0) {
    m |= 0x800000;
    p = e - 150;
  }
  return {(b >> 31) ? -m : m, p};
}

// Inlined into forward_row's clones, so that the fma clone's helpers use the
// fma instruction (the default clone calls libm's fma: the same results, as
// fma rounds once either way).
template <class Int>
[[gnu::always_inline]] inline bool run(bool layer, std::span<const float> x, std::span<const float> gamma,
         std::span<const float> beta, float eps, int low, bool n0_exact, std::vector<Int>& scaled,
         ForwardRow& out, double bs) {
  const int64_t d = static_cast<int64_t>(x.size());
  scaled.resize(d);
  Int S = 0, A = 0;
  for (int64_t i = 0; i < d; ++i) {
    Int v = 0;
    if (x[i] != 0) {
      const FloatParts fp = parts(x[i]);
      v = static_cast<Int>(fp.m) * (Int{1} << (fp.p - low));
    }
    scaled[i] = v;
    S += v;
    A += v < 0 ? -v : v;
  }
  bool ok = true;
  const double up = 1 + 0x1p-50 * bs;  // decide()'s allowance for rounding m
  const double dd_d = static_cast<double>(d);
  const double k = layer ? dd_d : 1.0;
  const DD kkd = layer ? two_prod_dd(dd_d * dd_d, dd_d) : DD{dd_d, 0};

  // N0 = sum D_i^2: exactly in 128 bits when it fits (then one rounding to
  // double-double), else in double-double.
  DD n0;
  double rho_n0;
  bool n0_dd_exact = false;
  if (n0_exact) {
    __int128 n0_int = 0;
    for (int64_t i = 0; i < d; ++i) {
      const auto Di = static_cast<__int128>(layer ? static_cast<Int>(d) * scaled[i] - S : scaled[i]);
      out.dev[i] = to_dd(Di);
      n0_int += Di * Di;
    }
    n0 = to_dd(n0_int);
    n0_dd_exact = static_cast<__int128>(n0.l) == n0_int - static_cast<__int128>(n0.h);
    rho_n0 = 2 * kU2 * bs;
  } else {
    for (int64_t i = 0; i < d; ++i) {
      const DD D = to_dd(layer ? static_cast<Int>(d) * scaled[i] - S : scaled[i]);
      out.dev[i] = D;
      n0 = add_nonneg(n0, mul(D, D, ok));
    }
    rho_n0 = (4 * dd_d + 16) * kU2 * bs;
  }
  const double rho_d = 2 * kU2 * bs;
  const bool pow2 = (d & (d - 1)) == 0;
  const int log2_d = std::countr_zero(static_cast<uint64_t>(d));
  const DD E = eps == 0 ? DD{} : scale(mul(kkd, DD{eps, 0}, ok), -2 * low);
  const double rho_e = 8 * kU2 * bs;
  const DD N = add_nonneg(n0, E);
  const double rho_n = std::max(rho_n0, rho_e) + 4 * kU2 * bs;
  const double rho_div = 32 * kU2 * bs;
  const DD c = sqrt_dd(div(DD{dd_d, 0}, N, ok), ok);
  const double rho_c = (rho_n + rho_div) / 2 + 10 * kU2 * bs;
  if (!ok) return false;
  out.n = N;
  out.c = c;
  out.rho_dev = rho_d;
  out.rho_n = rho_n;
  out.rho_c = rho_c;
  out.low = low;
  out.has_state = true;

  // Row statistics.
  if (S == 0) {
    out.mean = {0.0f, 0.0};  // an exactly zero sum is +0 (as MPFR's)
  } else if (pow2 || S % d == 0) {
    // A dyadic mean (S 2^(low - log2 d), or (S / d) 2^low), often a float
    // midpoint: rounded exactly.
    const Int q = pow2 ? S : S / d;
    const DD mean = to_dd(q);
    if (static_cast<Int>(mean.l) != q - static_cast<Int>(mean.h)) return false;  // not exact
    const int shift = pow2 ? low - log2_d : low;
    if (!exact_roundings(scale(mean, shift), out.mean)) return false;
  } else {
    const DD mean = div(scale(to_dd(S), low), DD{dd_d, 0}, ok);
    if (!decide(mean, bound(rho_d + rho_div, mean), out.mean, true, up)) return false;
  }
  // mean|x| and the variance: exact dyadics when d is a power of two (and
  // their sums are exact in double-double), often on a double midpoint then:
  // rounded exactly.
  Roundings tmp;
  const DD a_dd = to_dd(A);
  if (pow2 && static_cast<Int>(a_dd.l) == A - static_cast<Int>(a_dd.h)) {
    if (!exact_roundings(scale(a_dd, low - log2_d), tmp)) return false;
  } else {
    const DD mabs = div(scale(a_dd, low), DD{dd_d, 0}, ok);
    if (!decide(mabs, bound(rho_d + rho_div, mabs), tmp, false, up)) return false;
  }
  out.mean_abs_x = tmp.d;
  if (pow2 && n0_exact && n0_dd_exact) {
    if (!exact_roundings(scale(n0, 2 * low - (layer ? 3 : 1) * log2_d), tmp)) return false;
  } else {
    const DD var = div(scale(n0, 2 * low), kkd, ok);
    if (!decide(var, bound(rho_n0 + rho_div, var), tmp, false, up)) return false;
  }
  out.variance = tmp.d;
  if (eps == 0) {
    out.eps_share = 0;  // 0 / N, N > 0
  } else {
    const DD share = div(E, N, ok);
    if (!decide(share, bound(rho_e + rho_n + rho_div, share), tmp, false, up)) return false;
    out.eps_share = tmp.d;
  }
  const DD r = scale(mul(c, DD{k, 0}, ok), -low);
  if (!decide(r, bound(rho_c + 8 * kU2 * bs, r), out.r, true, up)) return false;
  if (!ok) return false;

  // Elements.
  const double rho_xhat = rho_d + rho_c + 8 * kU2 * bs;
  const double rho_gx = rho_xhat + 8 * kU2 * bs;
  const double add_rel = 4 * kU2 * bs;
  for (int64_t i = 0; i < d; ++i) {
    const DD D = out.dev[i];
    if (D.h == 0) return false;  // xhat_i = 0: its sign of zero is MPFR's to give
    const DD xhat = mul(D, c, ok);
    if (!decide(xhat, bound(rho_xhat, xhat), out.xhat[i], true, up)) return false;
    const double g = gamma.empty() ? 1.0 : gamma[i];
    const double b = beta.empty() ? 0.0 : beta[i];
    const DD gx = mul(xhat, DD{g, 0}, ok);
    const DD y = add_double(gx, b);
    const double e = (rho_gx * std::fabs(gx.h) + add_rel * (std::fabs(gx.h) + std::fabs(b))) * kSlack;
    if (!decide(y, e, out.y[i], true, up)) return false;
  }
  return ok;
}

// The clones have internal linkage, so their load-time resolver is not
// exported from the library either.
NORMCHECK_FMA_CLONES
bool forward_row_clones(bool layer, std::span<const float> x, std::span<const float> gamma,
                        std::span<const float> beta, float eps, ForwardRow& out,
                        double bound_scale) {
  out.has_state = false;
  const int64_t d = static_cast<int64_t>(x.size());
  if (d < 1 || d > (int64_t{1} << 24) || !std::isfinite(eps) || eps < 0) return false;
  for (float g : gamma)
    if (!std::isfinite(g)) return false;
  for (float b : beta)
    if (!std::isfinite(b)) return false;
  int low = 1 << 20, top = -(1 << 20);
  float max_abs = 0;
  for (float v : x) {
    if (!std::isfinite(v)) return false;
    if (v == 0) continue;
    const FloatParts fp = parts(v);
    low = std::min(low, fp.p);
    top = std::max(top, fp.p + 24);
    max_abs = std::max(max_abs, std::fabs(v));
  }
  if (top < low) return false;  // all zero
  out.d_ = d;
  out.finite = true;
  out.max_abs_x = max_abs;
  out.xhat.resize(d);
  out.y.resize(d);
  out.dev.resize(d);
  const long width = (top - low) + log2_ceil(d) + 1;  // bits of the largest |D_i|
  const bool n0_exact = 2 * width + log2_ceil(d) <= 126;  // sum D_i^2 < 2^126
  if (width <= 62)
    return run<int64_t>(layer, x, gamma, beta, eps, low, n0_exact, out.scaled64, out, bound_scale);
  if (width <= 126)
    return run<__int128>(layer, x, gamma, beta, eps, low, n0_exact, out.scaled128, out, bound_scale);
  return false;
}

}  // namespace

bool forward_row(bool layer, std::span<const float> x, std::span<const float> gamma,
                 std::span<const float> beta, float eps, ForwardRow& out, double bound_scale) {
  return forward_row_clones(layer, x, gamma, beta, eps, out, bound_scale);
}

}  // namespace normcheck::fast
