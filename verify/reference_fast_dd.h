// Internal to normcheck_verify and its tests (not installed): double-double
// arithmetic with a proven relative error per operation, and the decision of a
// real's float and double roundings from an approximation and its error bound.
// The fast phases of the exact references (reference_fast.cpp: forward rows,
// reference_fast_bwd.cpp: backward rows and column sums) are built from these;
// each derives its own bounds from the ones stated here.
//
// A double-double is a pair h + l with |l| <= ulp(h)/2, so h is the double
// nearest h + l. u = 2^-53. Every operation's error is derived at its
// definition, for inputs whose doubles lie in [2^-900, 2^900] (or are 0):
// then no product's error underflows and every fma-based product is exact.
// Callers check the range with in_range() (mul, div and sqrt_dd check their
// results themselves) and leave a row to the MPFR path outside it.
//
// Everything is always_inline: the fast phases compile a clone per target
// (an fma one and a default one: NORMCHECK_FMA_CLONES), and each clone must get
// its own copy of these helpers to use the fma instruction.
#pragma once

// GCC: an fma clone and a default one, chosen at load time (ifunc). Other
// compilers build the default one only (the same results, slower).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NORMCHECK_FMA_CLONES [[gnu::target_clones("fma", "default")]]
#else
#define NORMCHECK_FMA_CLONES
#endif

#include <bit>
#include <cmath>
#include <cstdint>

// Internal: hidden from normcheck_verify's exported symbols, as reference_mp.h.
namespace normcheck {
namespace [[gnu::visibility("hidden")]] fast {

// A real's correct roundings to float and to double (round to nearest even,
// float subnormals, +-inf past the float overflow boundary).
struct Roundings {
  float f = 0;
  double d = 0;
};

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

// s + t, any signs: sh + th = p + e exactly; fl(sl + tl) rounds by
// u |sl + tl| <= u^2 (|sh| + |th|); fl(e + that) by u (|e| + |sl + tl|)
// <= 2.01 u^2 (|sh| + |th|); the last step is exact. Absolute error
// <= 3.01 u^2 (|sh| + |th|) <= 3.02 u^2 (|s| + |t|), whatever the
// cancellation (the result may be far below either operand).
[[gnu::always_inline]] inline DD add_signed(DD s, DD t) {
  const DD p = two_sum(s.h, t.h);
  return two_sum(p.h, p.l + (s.l + t.l));
}

// add_double and add_signed that also clear `exact` when the sum rounded
// (the same results: the roundings they check are the ones that may occur).
// A chain of additions that never cleared it holds its exact sum.
[[gnu::always_inline]] inline DD add_double(DD x, double b, bool& exact) {
  const DD p = two_sum(x.h, b);
  const DD q = two_sum(p.l, x.l);
  exact &= q.l == 0;
  return two_sum(p.h, q.h);
}
[[gnu::always_inline]] inline DD add_signed(DD s, DD t, bool& exact) {
  const DD p = two_sum(s.h, t.h);
  const DD lo = two_sum(s.l, t.l);
  const DD q = two_sum(p.l, lo.h);
  exact &= lo.l == 0 && q.l == 0;
  return two_sum(p.h, q.h);
}

[[gnu::always_inline]] inline DD neg(DD x) { return {-x.h, -x.l}; }

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

// 2^e for -1022 <= e <= 1023 (a normal double).
[[gnu::always_inline]] inline double pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52); }

// x 2^e for |e| <= 1022: exact while the results stay normal (callers keep
// them in [2^-900, 2^900]).
[[gnu::always_inline]] inline DD scale(DD x, int e) {
  const double p = pow2(e);
  return {x.h * p, x.l * p};
}

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

}  // namespace fast
}  // namespace normcheck
