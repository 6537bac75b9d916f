// The number formats normcheck stores values in (float32, bf16, f16): their
// parameters, the bit conversions between them, and the distance in units in
// the last place (ULP) in each. The one home of these facts; kernels, the
// verification library, the folding library, bench and the tests use it.
//
// Every format here is an IEEE-style binary format with gradual underflow:
// a precision p (significand bits, the implicit bit included), a smallest
// normal exponent min_exp and a largest exponent max_exp. From those three:
//   unit roundoff             u   = 2^-p          (|fl(x) - x| <= u |x| in the normal range)
//   smallest normal               = 2^min_exp
//   subnormal spacing             = 2^(min_exp - p + 1), also the smallest subnormal
//   half the subnormal spacing    = 2^(min_exp - p) (the absolute rounding error below the normal range)
//   largest finite                = (2 - 2^(1 - p)) 2^max_exp
//
//            p   min_exp  max_exp  u      smallest subnormal  largest finite
//   float32  24  -126     127      2^-24  2^-149              0x1.fffffep127 (FLT_MAX)
//   bf16      8  -126     127      2^-8   2^-133              0x1.fep127
//   f16      11  -14      15       2^-11  2^-24               65504
//
// The 8-bit formats a kernel may quantize its output to (QuantFormat, at the
// end) are the two OCP fp8 formats and int8:
//            p   min_exp  max_exp  smallest subnormal  largest finite  overflow
//   e4m3fn    4  -6       8        2^-9                448             NaN (no infinities)
//   e5m2      3  -14      15       2^-16               57344           +-inf
//   int8     integers in [-128, 127]
// e4m3fn is IEEE-style but for its top binade, which gives the exponent's last
// code to finite values and keeps only S.1111.111 for NaN: its largest finite
// value is 1.75 2^8, not (2 - 2^-3) 2^8.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "normcheck/kernel.h"

namespace normcheck {

// 2^e for |e| < 1023 + 52, computed exactly at compile time (std::ldexp is not
// constexpr in C++20).
constexpr double pow2(int e) {
  double r = 1;
  for (; e > 0; --e) r *= 2;
  for (; e < 0; ++e) r /= 2;  // exact down to double's smallest subnormal
  return r;
}

// The parameters of one format and the quantities that follow from them.
struct FloatFormat {
  int precision;  // p: 24, 8, 11
  int min_exp;    // -126, -126, -14: 2^min_exp is the smallest normal
  int max_exp;    // 127, 127, 15: the largest finite value lies in [2^max_exp, 2^(max_exp+1))

  constexpr double unit_roundoff() const { return pow2(-precision); }
  constexpr double smallest_normal() const { return pow2(min_exp); }
  constexpr double subnormal_spacing() const { return pow2(min_exp - precision + 1); }
  constexpr double smallest_subnormal() const { return subnormal_spacing(); }
  constexpr double half_smallest_subnormal() const { return pow2(min_exp - precision); }
  constexpr double largest_finite() const { return (2 - pow2(1 - precision)) * pow2(max_exp); }
  // Bits of storage: sign, exponent (max_exp = 2^(k-1) - 1 for k exponent bits), p - 1 stored significand bits.
  constexpr int storage_bits() const { return 1 + std::bit_width(static_cast<unsigned>(max_exp)) + 1 + precision - 1; }
  constexpr int storage_bytes() const { return storage_bits() / 8; }
};

inline constexpr FloatFormat kFloat32Format{24, -126, 127};
inline constexpr FloatFormat kBf16Format{8, -126, 127};
inline constexpr FloatFormat kF16Format{11, -14, 15};

constexpr FloatFormat float_format(DType t) {
  switch (t) {
    case DType::f32: break;
    case DType::bf16: return kBf16Format;
    case DType::f16: return kF16Format;
  }
  return kFloat32Format;
}

// The per-dtype quantities above, computed once (pow2 loops: at compile time).
struct FormatConstants {
  FloatFormat format;
  double unit_roundoff, smallest_normal, half_smallest_subnormal, largest_finite;
  double binade_above_max;  // 2^(max_exp + 1): every |v| at or above it rounds to inf
};
constexpr FormatConstants format_constants_of(FloatFormat f) {
  return {f, f.unit_roundoff(), f.smallest_normal(), f.half_smallest_subnormal(), f.largest_finite(),
          pow2(f.max_exp + 1)};
}
inline constexpr FormatConstants kFormatConstants[] = {
    format_constants_of(kFloat32Format), format_constants_of(kBf16Format), format_constants_of(kF16Format)};
static_assert(static_cast<int>(DType::f32) == 0 && static_cast<int>(DType::bf16) == 1 &&
              static_cast<int>(DType::f16) == 2);
constexpr const FormatConstants& format_constants(DType t) { return kFormatConstants[static_cast<int>(t)]; }

// Shorthands for the per-dtype quantities above.
constexpr double unit_roundoff(DType t) { return format_constants(t).unit_roundoff; }
constexpr double half_smallest_subnormal(DType t) { return format_constants(t).half_smallest_subnormal; }
// The largest finite value of the format; beyond it a value rounds to inf.
constexpr double largest_finite(DType t) { return format_constants(t).largest_finite; }

// The spacing of the format's values at |v| (one ULP there): 2^(e - p + 1)
// with e = floor(log2 |v|) taken within [min_exp, max_exp], so the subnormal
// spacing below the normal range (0 included) and the top binade's spacing
// beyond the largest finite value. e is v's unbiased exponent for a normal
// double; a subnormal double or 0 lies below every format's normal range
// (min_exp >= -126) and takes min_exp, as does NaN (as glibc's ilogb, whose
// FP_ILOGBNAN is INT_MIN); +-inf takes max_exp. The result, 2^k with
// -149 <= k <= 127 - p + 1, is a normal double, built from its bits.
inline double spacing(DType t, double v) {
  const FloatFormat f = float_format(t);
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const bool nan = biased == 0x7ff && (bits << 12) != 0;
  const int e = biased == 0 || nan ? f.min_exp : std::clamp(biased - 1023, f.min_exp, f.max_exp);
  return std::bit_cast<double>(static_cast<uint64_t>(e - f.precision + 1 + 1023) << 52);
}

// The correct rounding of a double v to format t (to nearest, ties to even,
// gradual underflow, +-inf past the overflow boundary), as a double (which
// holds every value of the three formats). Exact double arithmetic: v /
// spacing is a power-of-two scaling, and the floor and the remainder of a
// double are exact.
//
// In the format's normal range the rounding is done on v's bits: the low
// 53 - p bits of its significand are dropped, adding half of their weight
// less one, plus the last kept bit (ties to even); a carry moves the value
// to the next binade, exactly as rounding up does there. No floating-point
// operation, so no dependence on the rounding mode.
//
// in_normal_rounding_range and round_in_normal_range are that bit path alone,
// for loops that round many values in vectors (no branch, no call) and leave
// the values outside the range to round_to_format.
inline bool in_normal_rounding_range(const FormatConstants& c, double v) {
  const double a = std::fabs(v);
  return (a >= c.smallest_normal) & (a < c.binade_above_max);  // false for NaN; `&`: no branch
}
inline double round_in_normal_range(const FormatConstants& c, double v) {
  const int64_t drop = 53 - c.format.precision;
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const uint64_t add = (uint64_t{1} << (drop - 1)) - 1 + ((bits >> drop) & 1);
  const double r = std::bit_cast<double>((bits + add) & ~((uint64_t{1} << drop) - 1));
  return std::fabs(r) > c.largest_finite ? std::copysign(std::numeric_limits<double>::infinity(), v) : r;
}
inline double round_to_format(DType t, double v) {
  const FormatConstants& c = format_constants(t);
  if (in_normal_rounding_range(c, v)) return round_in_normal_range(c, v);
  if (!std::isfinite(v) || v == 0) return v;
  const double s = spacing(t, v);
  const double below = std::floor(v / s) * s, twice_rem = (v - below) * 2;
  const bool up = twice_rem > s || (twice_rem == s && std::fmod(below / s, 2) != 0);
  const double r = up ? below + s : below;
  if (std::fabs(r) > largest_finite(t)) return std::copysign(std::numeric_limits<double>::infinity(), r);
  return r == 0 ? std::copysign(0.0, v) : r;
}

// Whether v (finite) lies exactly halfway between two consecutive values of
// format t: where the rounding of v and of a real next to v may differ, so
// that a double's rounding to t says nothing of the real it approximates.
inline bool on_midpoint(DType t, double v) {
  if (!std::isfinite(v)) return false;
  const double s = spacing(t, v);
  return (v - std::floor(v / s) * s) * 2 == s;
}

// ---- bit conversions ----

// float32 -> bf16 bits, rounded to nearest even (bf16 keeps float's exponent
// range, so this is one rounding, overflow to inf included); NaN stays a quiet NaN.
inline uint16_t bf16_from_float(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
  const uint32_t round_to_nearest_even = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + round_to_nearest_even) >> 16);
}

// bf16 bits -> float32: exact.
inline float float_from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// IEEE binary16 conversions in integer arithmetic, for compilers without
// _Float16 on the target (clang 14 on x86-64, which builds the libFuzzer
// target). Round to nearest, ties to even, subnormals and overflow to inf as
// the hardware conversion does; a NaN stays a NaN (quiet, its top payload bits
// kept). tests/kernels/test_float_format_f16_fallback.cpp compares both with _Float16 on every
// f16 value and on floats around every rounding boundary.
namespace f16_bits {

inline uint16_t from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (or inf): inf
  const uint32_t e = abs >> 23;
  if (e < 113) {  // below 2^-14: an f16 subnormal or zero, in units of 2^-24
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25 (float subnormals included): 0
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;  // value = m 2^(e - 150)
    const uint32_t s = 126 - e;                       // value / 2^-24 = m / 2^s, s in 14..24
    uint32_t q = m >> s;
    const uint32_t rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t q = ((e - 112) << 10) | ((abs >> 13) & 0x3ffu);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;  // a carry moves into the exponent, as it should
  return static_cast<uint16_t>(sign | q);
}

inline float to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact: m < 2^10
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

}  // namespace f16_bits

#if defined(__FLT16_MAX__)  // the compiler has _Float16 on this target
// float32 -> f16 bits, rounded to nearest even with subnormals and overflow to inf.
inline uint16_t f16_from_float(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

// f16 bits -> float32: exact.
inline float float_from_f16(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
#else  // the same conversions in integer arithmetic
inline uint16_t f16_from_float(float f) { return f16_bits::from_float(f); }
inline float float_from_f16(uint16_t h) { return f16_bits::to_float(h); }
#endif

// float32 -> the bits of a 16-bit dtype (bf16 or f16), rounded to nearest even.
inline uint16_t to_16(DType t, float f) { return t == DType::bf16 ? bf16_from_float(f) : f16_from_float(f); }

// The bits of a 16-bit dtype (bf16 or f16) -> float32: exact.
inline float from_16(DType t, uint16_t h) { return t == DType::bf16 ? float_from_bf16(h) : float_from_f16(h); }

// ---- ULP distances ----

// Position of a float on the monotone integer line of floats: consecutive
// floats are consecutive integers, +0 and -0 are both 0, +-inf sit one past
// +-FLT_MAX. NaN has no position (callers treat it separately).
// Sign-magnitude bits mapped to a signed integer: the magnitude bits of a
// non-negative float already increase with its value (inf = 0x7f800000 sits
// right after FLT_MAX = 0x7f7fffff), and negatives mirror them, so -0 and +0
// both land on 0.
inline int64_t float_ordinal(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const int64_t magnitude = bits & 0x7fffffffu;
  return (bits >> 31) ? -magnitude : magnitude;
}

namespace float_format_detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr float kFltMax = std::numeric_limits<float>::max();
// Spacing of the top float binade [2^127, 2^128): the ULP of FLT_MAX.
inline constexpr double kTopUlp = 0x1p104;

// The largest float <= a (a >= 0, a <= FLT_MAX) and the gap to the next float
// (+1 on the bits of a non-negative finite float is the next float).
inline void float_below(double a, float& below, double& gap) {
  below = static_cast<float>(a);  // nearest (+0 for a = 0); step down if it rounded up (then below > 0)
  if (static_cast<double>(below) > a) below = std::bit_cast<float>(std::bit_cast<uint32_t>(below) - 1);
  const float next = std::bit_cast<float>(std::bit_cast<uint32_t>(below) + 1);
  gap = below == kFltMax ? kTopUlp : static_cast<double>(next) - below;
}

// The float spacing in the binade whose sign and biased double exponent are
// `head` (bits 63..52 of a double in float's normal range): 2^(e - 23).
inline double spacing_of_binade(uint64_t head) {
  return std::bit_cast<double>(((head & 0x7ff) - 23) << 52);
}

// 1 / p for a power of two p in [2^-1022, 2^1023], from its bits: exact, as
// is x * (1 / p) = x / p (one rounding of the same real), without a division.
inline double inverse_power_of_two(double p) {
  return std::bit_cast<double>((uint64_t{2046} << 52) - std::bit_cast<uint64_t>(p));
}

// Whether the double whose bits 63..52 are `head` and the double e lie in one
// binade of float's normal range, with one sign (ulp_error's closed form).
inline bool in_one_float_binade(uint64_t head, double e) {
  const uint64_t exponent = head & 0x7ff;
  return head == std::bit_cast<uint64_t>(e) >> 52 && exponent >= 1023 - 126 && exponent <= 1023 + 127;
}

// ulp_error(c, e) for c and e in one binade (in_one_float_binade, `head`
// c's bits 63..52): |c - e| over the binade's float spacing.
inline double one_binade_ulps(double c, double e, uint64_t head) {
  return std::fabs(c - e) * inverse_power_of_two(spacing_of_binade(head));
}

// Position of a non-negative value on f16's ordinal line (consecutive f16
// values are consecutive integers; 2^-24 is the subnormal spacing, each binade
// above 2^-14 holds 1024 values; past 65504 the top binade's spacing goes on,
// so +inf sits at 65536 like one more value).
inline double f16_position(double a) {
  if (a < 0x1p-14) return a / 0x1p-24;
  const int e = std::min(std::ilogb(a), 15);
  return 1024.0 * (e + 15) + (a / std::ldexp(1.0, e) - 1) * 1024.0;
}

}  // namespace float_format_detail

// Distance in float32 ULP between a computed float and the exact (unrounded)
// value, measured on float_ordinal's line: the exact value's position is
// fractional.
//   NaN vs NaN = 0; NaN vs number (either way) = +inf; inf vs the same inf = 0;
//   an exact value beyond the float range sits past FLT_MAX at the spacing of
//   the top binade, so overflow to inf costs what the distance says.
inline double ulp_error(float computed, double exact) {
  using namespace float_format_detail;
  // Both in one binade [2^k, 2^(k+1)) of float's normal range, one sign:
  // the line is linear there with float spacing 2^(k-23), and the distance is
  // |computed - exact| 2^(23-k), exact (Sterbenz: the difference of two
  // values within a factor 2 of each other is a double; the scaling is by a
  // power of two). It is the value of the general path below too: there
  // |whole| < 2^24 and frac is a multiple of 2^-29 (exact's last bit, 2^(k-52),
  // over the gap), so whole - frac fits 53 bits. Past FLT_MAX the top
  // binade's spacing goes on (kTopUlp), the same line.
  const double c = computed;
  const uint64_t head = std::bit_cast<uint64_t>(c) >> 52;  // sign and biased exponent
  if (in_one_float_binade(head, exact)) return one_binade_ulps(c, exact, head);
  if (std::isnan(computed) || std::isnan(exact))
    return std::isnan(computed) && std::isnan(exact) ? 0 : kInf;
  if (std::isinf(exact))  // a true infinity (not an overflowed value): only itself is close
    return static_cast<double>(computed) == exact ? 0 : kInf;

  // The exact value's position, n + frac on the ordinal line of |exact|; the
  // distance is taken as an integer part plus a fraction so that no rounding
  // of ordinals near 2^31 eats the fraction.
  const double a = std::fabs(exact);
  int64_t n;
  double frac;
  if (a >= kFltMax) {
    n = float_ordinal(kFltMax);
    frac = (a - kFltMax) * (1 / kTopUlp);  // past FLT_MAX at the top binade's spacing
  } else {
    float below;
    double gap;
    float_below(a, below, gap);
    n = float_ordinal(below);
    frac = (a - below) * inverse_power_of_two(gap);  // a - below is exact: both lie within one float gap
  }
  const int64_t sign = std::signbit(exact) ? -1 : 1;
  const int64_t whole = float_ordinal(computed) - sign * n;
  return std::fabs(static_cast<double>(whole) - static_cast<double>(sign) * frac);
}

// ULP distance between two floats (integer on the same line; NaN rules as above).
inline double ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : float_format_detail::kInf;
  return static_cast<double>(std::llabs(float_ordinal(a) - float_ordinal(b)));
}

// ULP distance in the format of dtype t between a computed value (a float
// holding a value of that format) and the exact value; the rules of
// ulp_error(float, double). bf16 shares float's exponent range, so one bf16
// ulp is exactly 2^16 float ulps everywhere, overflow included; f16 is
// measured on its own ordinal line.
inline double ulp_error(DType t, float computed, double exact) {
  using namespace float_format_detail;
  switch (t) {
    case DType::f32: return ulp_error(computed, exact);
    case DType::bf16: return ulp_error(computed, exact) / 0x1p16;
    case DType::f16: break;
  }
  if (std::isnan(computed) || std::isnan(exact))
    return std::isnan(computed) && std::isnan(exact) ? 0 : kInf;
  if (std::isinf(exact)) return static_cast<double>(computed) == exact ? 0 : kInf;
  auto signed_position = [](double v) {
    const double p = std::isinf(v) ? f16_position(65536.0) : f16_position(std::fabs(v));
    return std::signbit(v) ? -p : p;
  };
  return std::fabs(signed_position(computed) - signed_position(exact));
}

// ---- the 8-bit output formats ----

enum class QuantFormat { e4m3, e5m2, int8 };

// How a kernel casts a real t (its value divided by the scale) to a code.
// fp8: to nearest, ties to even, on the format's values; saturate: t is
// first clamped to [-max, max] (what vLLM, FlashInfer and TransformerEngine
// do); otherwise a t that rounds past max is the overflow value (NaN for
// e4m3fn, +-inf for e5m2), the rule of IEEE rounding with the format's top
// binade continued. int8: to the nearest integer, ties to even or away from
// zero, then clamped to [-128, 127], or to [-127, 127] when symmetric.
struct QuantCast {
  QuantFormat format = QuantFormat::e4m3;
  bool saturate = true;     // fp8 only
  bool ties_away = false;   // int8 only
  bool symmetric = false;   // int8 only
  friend bool operator==(const QuantCast&, const QuantCast&) = default;
};

namespace quant_detail {
struct Fp8 {
  int precision, min_exp;
  double largest;
};
constexpr Fp8 fp8(QuantFormat f) { return f == QuantFormat::e4m3 ? Fp8{4, -6, 448} : Fp8{3, -14, 57344}; }
}  // namespace quant_detail

// The largest finite value of the format: 448, 57344, 127.
constexpr double quant_max(QuantFormat f) { return f == QuantFormat::int8 ? 127 : quant_detail::fp8(f).largest; }

// The spacing of an fp8 format's values at |t| (one code there): 2^(e - p + 1),
// e = floor(log2 |t|) but at least min_exp (the subnormal spacing below it);
// int8's is 1.
inline double quant_spacing(QuantFormat f, double t) {
  if (f == QuantFormat::int8) return 1;
  const quant_detail::Fp8 p = quant_detail::fp8(f);
  const int e = t == 0 ? p.min_exp : std::max(std::ilogb(t), p.min_exp);
  return std::ldexp(1.0, e - p.precision + 1);
}

// The value the cast gives for t (finite or not): a value of the format as a
// double, or NaN / +-inf. Exact: every step is a power-of-two scaling, a
// floor or a comparison of doubles.
inline double quant_cast(const QuantCast& q, double t) {
  if (std::isnan(t)) return q.format == QuantFormat::int8 ? 0 : t;  // int8 has no NaN: the hardware gives 0
  if (q.format == QuantFormat::int8) {
    const double lo = q.symmetric ? -127 : -128;
    if (std::isinf(t)) return t > 0 ? 127 : lo;
    double r = std::floor(t);
    const double rem = t - r;  // exact: |t| < 2^53 or t is an integer already
    if (rem > 0.5 || (rem == 0.5 && (q.ties_away ? t > 0 : std::fmod(r, 2) != 0))) r += 1;
    return std::clamp(r, lo, 127.0);
  }
  const quant_detail::Fp8 f = quant_detail::fp8(q.format);
  if (q.saturate) t = std::clamp(t, -f.largest, f.largest);
  if (std::isinf(t)) return q.format == QuantFormat::e5m2 ? t : std::numeric_limits<double>::quiet_NaN();
  if (t == 0) return t;
  const double s = quant_spacing(q.format, t);
  const double below = std::floor(t / s) * s, twice_rem = (t - below) * 2;
  const bool up = twice_rem > s || (twice_rem == s && std::fmod(below / s, 2) != 0);
  const double r = up ? below + s : below;
  if (std::fabs(r) > f.largest)
    return q.format == QuantFormat::e5m2 ? std::copysign(std::numeric_limits<double>::infinity(), r)
                                         : std::numeric_limits<double>::quiet_NaN();
  return r == 0 ? std::copysign(0.0, t) : r;
}

// The byte of a value of the format (int8: two's complement; NaN: e4m3fn's
// 0x7f, e5m2's 0x7e, keeping its sign bit).
inline uint8_t quant_code(QuantFormat f, double v) {
  if (f == QuantFormat::int8) return static_cast<uint8_t>(static_cast<int8_t>(v));
  const quant_detail::Fp8 p = quant_detail::fp8(f);
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const int mant_bits = p.precision - 1, exp_bits = 7 - mant_bits;
  if (std::isnan(v)) return static_cast<uint8_t>(sign | (f == QuantFormat::e4m3 ? 0x7f : 0x7e));
  if (std::isinf(v)) return static_cast<uint8_t>(sign | (((1 << exp_bits) - 1) << mant_bits));
  const double a = std::fabs(v);
  const int bias = 1 - p.min_exp;
  if (a < std::ldexp(1.0, p.min_exp))  // subnormal (or zero): a / 2^(min_exp - mant_bits) is the field
    return static_cast<uint8_t>(sign | static_cast<int>(a / std::ldexp(1.0, p.min_exp - mant_bits)));
  const int e = std::ilogb(a);
  const int m = static_cast<int>((a / std::ldexp(1.0, e) - 1) * (1 << mant_bits));
  return static_cast<uint8_t>(sign | ((e + bias) << mant_bits) | m);
}

// The value of a byte (NaN for e4m3fn's S.1111.111 and e5m2's NaNs).
inline double quant_value(QuantFormat f, uint8_t code) {
  if (f == QuantFormat::int8) return static_cast<int8_t>(code);
  const quant_detail::Fp8 p = quant_detail::fp8(f);
  const int mant_bits = p.precision - 1, exp_bits = 7 - mant_bits;
  const int field_e = (code & 0x7f) >> mant_bits, m = code & ((1 << mant_bits) - 1);
  const double sign = (code & 0x80) ? -1 : 1;
  const int top = (1 << exp_bits) - 1;
  if (f == QuantFormat::e4m3 && field_e == top && m == (1 << mant_bits) - 1) return std::numeric_limits<double>::quiet_NaN();
  if (f == QuantFormat::e5m2 && field_e == top)
    return m == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (field_e == 0) return sign * m * std::ldexp(1.0, p.min_exp - mant_bits);
  return sign * (1 + m / static_cast<double>(1 << mant_bits)) * std::ldexp(1.0, field_e - 1 + p.min_exp);
}

// The position of a value (or of a real) on the format's ordinal line:
// consecutive values are consecutive integers, +-0 is 0, and past the largest
// finite value the line goes on at the top binade's spacing (the overflow
// value, inf or e4m3fn's NaN, sits one past it). A real between two values
// has a fractional position; a distance on this line is a distance in codes.
inline double quant_position(QuantFormat f, double v) {
  if (f == QuantFormat::int8 || v == 0 || std::isnan(v)) return v;
  const quant_detail::Fp8 p = quant_detail::fp8(f);
  const int per_binade = 1 << (p.precision - 1);
  const double a = std::isinf(v) ? p.largest + std::ldexp(1.0, std::ilogb(p.largest) - p.precision + 1) : std::fabs(v);
  double pos;
  if (a < std::ldexp(1.0, p.min_exp)) pos = a / std::ldexp(1.0, p.min_exp - p.precision + 1);
  else {
    const int e = std::ilogb(a);
    pos = per_binade * (e - p.min_exp + 1) + (a / std::ldexp(1.0, e) - 1) * per_binade;
  }
  return std::signbit(v) ? -pos : pos;
}

}  // namespace normcheck
