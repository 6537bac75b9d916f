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

constexpr double kU2 = 0x1p-106;            // u^2
constexpr double kSlack = 1 + 0x1p-20;      // second-order terms and bound roundings
constexpr double kDown = 1 - 0x1p-50;       // fl(a - b) (1 - 2^-50) <= a - b for a >= b

struct DD {
  double h = 0, l = 0;
};

// Exact: a + b = s + e (Knuth), and a + b = s + e when |a| >= |b| or a = 0 (Dekker).
[[gnu::always_inline]] inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
[[gnu::always_inline]] inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// a b = p + e exactly (fma; no underflow in this file's ranges).
[[gnu::always_inline]] inline DD two_prod_dd(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

[[gnu::always_inline]] inline bool in_range(double v) {
  const double a = std::fabs(v);
  return a == 0 || (a >= 0x1p-900 && a <= 0x1p900);
}

// x y with x = xh + xl, y = yh + yl (|xl| <= u |xh|, |yl| <= u |yh|):
// ph + pl = xh yh exactly (fma); t = fl(fma(xl, yh, fl(xh yl))) misses xh yl
// by u^2 |xh yh| and itself rounds by u |t| <= 2.01 u^2 |xh yh|; xl yl
// (<= u^2 |xh yh|) is dropped; fl(pl + t) rounds by u (u |ph| + 2.01 u |xh yh|)
// <= 3.02 u^2 |xh yh|. Total 7.03 u^2 |xh yh| <= 7.04 u^2 |x y|.
[[gnu::always_inline]] inline DD mul(DD x, DD y, bool& ok) {
  const double ph = x.h * y.h;
  ok &= in_range(ph);
  const double pl = std::fma(x.h, y.h, -ph);
  const double t = std::fma(x.l, y.h, x.h * y.l);
  return fast_two_sum(ph, pl + t);
}

// s + t for s, t >= 0: sh + th = h + e exactly; fl(sl + tl) rounds by
// u^2 (sh + th), fl(e + that) by u (|e| + |sl + tl|) <= 2.01 u^2 (sh + th).
[[gnu::always_inline]] inline DD add_nonneg(DD s, DD t) {
  const DD p = two_sum(s.h, t.h);
  return fast_two_sum(p.h, p.l + (s.l + t.l));
}

// x + b: xh + b = h + e exactly; fl(e + xl) rounds by u (u |h| + u |xh|)
// <= 2.01 u^2 (|xh| + |b|); the last step is exact whatever the signs.
[[gnu::always_inline]] inline DD add_double(DD x, double b) {
  const DD p = two_sum(x.h, b);
  return two_sum(p.h, p.l + x.l);
}

// a / b: q1 = fl(ah / bh); R = a - q1 b = (ah - p) - pe + al - q1 bl with
// p + pe = q1 bh exactly and ah - p exact (Sterbenz: p = ah (1 + 2.01 u));
// |R| <= 5.05 u |ah|; the four roundings of r cost 13.2 u^2 |ah|; q2 = fl(r /
// bh) adds 5.1 u^2 |ah / b| (bh for b) and 5.2 u^2 |ah / b| (its rounding):
// 23.7 u^2 |a / b| in all.
[[gnu::always_inline]] inline DD div(DD a, DD b, bool& ok) {
  const double q1 = a.h / b.h;
  ok &= in_range(q1) && in_range(a.h) && in_range(b.h);
  const double p = q1 * b.h;
  const double pe = std::fma(q1, b.h, -p);
  const double r = (((a.h - p) - pe) + a.l) - q1 * b.l;
  return fast_two_sum(q1, r / b.h);
}

// sqrt(x), x > 0: s = fl(sqrt(xh)), s^2 = p + pe exactly, R = x - s^2 with
// |R| <= 4.02 u xh; r = fl(fl((xh - p) - pe) + xl) (xh - p exact) within
// 7.05 u^2 xh of R; sqrt(x) = s + R / (2 s) - R^2 / (8 s^3) + ...: the
// truncation 2.05 u^2 s, r's error 3.53 u^2 s, the quotient's rounding
// 2.01 u^2 s: 7.6 u^2 s <= 7.7 u^2 sqrt(x).
[[gnu::always_inline]] inline DD sqrt_dd(DD x, bool& ok) {
  const double s = std::sqrt(x.h);
  ok &= in_range(s) && in_range(x.h);
  const double p = s * s;
  const double pe = std::fma(s, s, -p);
  const double r = ((x.h - p) - pe) + x.l;
  return fast_two_sum(s, r / (2 * s));
}

[[gnu::always_inline]] inline DD scale(DD x, int e) { return {std::ldexp(x.h, e), std::ldexp(x.l, e)}; }

// An integer as a double-double: h = RN(v), v - h exact, l = RN(v - h):
// relative error <= u |v - h| / |v| <= 1.01 u^2, none below 2^53.
[[gnu::always_inline]] inline DD to_dd(int64_t v) {
  const double h = static_cast<double>(v);
  return {h, static_cast<double>(v - static_cast<int64_t>(h))};
}
// libgcc's __int128 conversion rounds to nearest like the hardware's.
[[gnu::always_inline]] inline DD to_dd(__int128 v) {
  const double h = static_cast<double>(v);
  return {h, static_cast<double>(v - static_cast<__int128>(h))};
}

[[gnu::always_inline]] inline double pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }

// The double decision: h = RN(v) is t's double when h - m and h + m lie
// strictly inside (h - gap_below / 2, h + gap_above / 2). |h| in
// [2^-900, 2^900]: normal, with exact gaps.
[[gnu::always_inline]] inline bool decide_double(double h, double m) {
  const uint64_t bits = std::bit_cast<uint64_t>(std::fabs(h));
  const int biased = static_cast<int>(bits >> 52);
  const double half_above = pow2(biased - 1023 - 53);
  const double half_below = (bits & ((uint64_t{1} << 52) - 1)) == 0 ? half_above / 2 : half_above;
  return m < half_below;  // half_below <= half_above
}

// The float decision for a = |h| (the sign is h's; the double decision keeps
// the interval off zero): f = float(a) and its rounding interval
// (mid_lo, mid_hi); gaps rounded down (exact whenever Sterbenz applies).
[[gnu::always_inline]] inline bool decide_float(double a, double m, float& f) {
  f = static_cast<float>(a);
  const uint32_t fb = std::bit_cast<uint32_t>(f);
  const int ef = static_cast<int>(fb >> 23);
  double mid_lo, mid_hi;
  if (ef == 255) {  // +inf: t at or past 2^128 - 2^103 rounds to inf
    mid_lo = 0x1.ffffffp127;
    mid_hi = HUGE_VAL;
  } else if (ef == 0) {  // zero or subnormal: spacing 2^-149
    const double fd = f;
    mid_lo = fd - 0x1p-150;
    mid_hi = fd + 0x1p-150;
  } else {
    const double fd = f;
    const double half = pow2(ef - 151);  // half the float spacing above f
    mid_hi = fd + half;
    mid_lo = fd - ((fb & 0x7fffff) == 0 && ef > 1 ? half / 2 : half);
  }
  const double gap_lo = (a - mid_lo) * kDown, gap_hi = (mid_hi - a) * kDown;
  return m < gap_lo && m < gap_hi;
}

// Decides t within e of v (both roundings when want_float). Zero, tiny, huge
// or NaN h: undecided.
// up: 1 + 2^-50, so that m = fl(fl(e + |l|) up) >= e + |l| ((1 - u)^2
// (1 + 2^-50) >= 1); 1 only in the negative control that drops every error
// term.
[[gnu::always_inline]] inline bool decide(DD v, double e, Roundings& out, bool want_float, double up) {
  const double a = std::fabs(v.h);
  if (!(a >= 0x1p-900 && a <= 0x1p900)) return false;
  const double m = (e + std::fabs(v.l)) * up;
  if (!decide_double(v.h, m)) return false;
  out.d = v.h;
  if (!want_float) return true;
  float f;
  if (!decide_float(a, m, f)) return false;
  out.f = std::copysign(f, static_cast<float>(v.h));
  return true;
}

// The roundings of an exactly known value h + l (h = RN(h + l)): the double
// is h. The float is float(h) unless h is a float midpoint: midpoints are
// doubles and h + l lies within half a double ulp of h, so no midpoint
// separates h + l from h. On a midpoint the sign of l picks the side; l = 0
// is the tie itself, which float(h) rounds to even as the reference does.
[[gnu::always_inline]] inline bool exact_roundings(DD v, Roundings& out) {
  const double a = std::fabs(v.h);
  if (!(a >= 0x1p-900 && a <= 0x1p900)) return false;
  out.d = v.h;
  const float f = static_cast<float>(v.h);
  out.f = f;
  const double fd = f;
  if (v.l == 0 || fd == v.h) return true;
  const float g = std::nextafter(f, v.h > fd ? HUGE_VALF : -HUGE_VALF);  // f's neighbour on h's side
  const double mid = std::isinf(f) || std::isinf(g) ? std::copysign(0x1.ffffffp127, v.h)
                                                    : (fd + static_cast<double>(g)) / 2;  // exact
  if (v.h == mid) out.f = (v.l > 0) == (g > f) ? g : f;
  return true;
}

[[gnu::always_inline]] inline double bound(double rho, DD v) { return rho * std::fabs(v.h) * kSlack; }

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
      if (Di == 0) return false;
      n0_int += Di * Di;
    }
    n0 = to_dd(n0_int);
    n0_dd_exact = static_cast<__int128>(n0.l) == n0_int - static_cast<__int128>(n0.h);
    rho_n0 = 2 * kU2 * bs;
  } else {
    for (int64_t i = 0; i < d; ++i) {
      const Int Di = layer ? static_cast<Int>(d) * scaled[i] - S : scaled[i];
      if (Di == 0) return false;
      const DD D = to_dd(Di);
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
    const Int Di = layer ? static_cast<Int>(d) * scaled[i] - S : scaled[i];
    const DD xhat = mul(to_dd(Di), c, ok);
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

// GCC: an fma clone and a default one, chosen at load time (ifunc). Other
// compilers build the default one only (the same results, slower).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NORMCHECK_FMA_CLONES [[gnu::target_clones("fma", "default")]]
#else
#define NORMCHECK_FMA_CLONES
#endif

// The clones have internal linkage, so their load-time resolver is not
// exported from the library either.
NORMCHECK_FMA_CLONES
bool forward_row_clones(bool layer, std::span<const float> x, std::span<const float> gamma,
                        std::span<const float> beta, float eps, ForwardRow& out,
                        double bound_scale) {
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
