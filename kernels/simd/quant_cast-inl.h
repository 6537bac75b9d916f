// The casts of float32 values to 8-bit codes, per target: what a quantized
// forward row does to t = fl32(y * fl32(1 / s)). Each gives, for every float
// t, the byte quant_code(f, quant_cast(q, t)) of float_format.h (q: the
// format, saturating for fp8, ties to even and [-128, 127] for int8), as the
// low byte of a 32-bit lane (tests/kernels/simd/test_quant_cast.cpp compares
// every float on every target).
//
// e4m3fn, saturating (OCP: a finite value past 448 and +-inf give +-448):
//   |t| is clamped to 448 first, so no value rounds up into S.1111.111 (NaN).
//   Normal range, 2^-6 <= |t| <= 448: e4m3 keeps 3 of float32's 23 fraction
//   bits. Rounding the float's bits a to nearest even at bit 20,
//   a + 0x7FFFF + ((a >> 20) & 1), carries into the exponent when the
//   fraction rounds up to 2, and (a' >> 20) is then 8 e + m with e float32's
//   biased exponent: the e4m3 code is that minus 8 (127 - 7) (biases 127 and
//   7), and subtracting (127 - 7) << 23 from a before the shift gives it
//   (one addition of 0x7FFFF - (120 << 23), modulo 2^32). 2^-6 gives 8
//   (exponent field 1), 448 gives 0x7E.
//   Subnormal range, |t| < 2^-6: the values are k 2^-9, k = 0..7, and k = 8
//   is 2^-6, the first normal code, so the code is |t| / 2^-9 rounded to the
//   nearest integer, ties to even. |t| + 2^14 in float32 is that rounding:
//   the sum lies in [2^14, 2^14 + 2^-6], where float32's spacing is
//   2^(14 - 23) = 2^-9, and the addition rounds to nearest even (the default
//   mode, which the kernels never change); its bits minus 2^14's are k.
//   The sign bit is float32's, zeros and values that round to zero included
//   (quant_cast keeps the sign of a zero result: -0 is 0x80). NaN is
//   S.1111.111 (0x7F or 0xFF, its sign kept), as quant_code writes it.
// int8, ties to even, clamped to [-128, 127]: t is clamped first (a t past
//   the ends rounds to the end either way: 127.5 and more give 127 after
//   rounding too, -128.5 rounds to -128), then rounded to an integer by
//   adding 1.5 2^23: the sum lies in [1.5 2^23 - 128, 1.5 2^23 + 127], where
//   float32's spacing is 1, so the addition rounds to nearest even and the
//   sum's bits minus those of 1.5 2^23 are the integer, in two's complement.
//   NaN gives 0 (quant_cast: int8 has no NaN), +-inf the ends.
#if defined(NORMCHECK_SIMD_QUANT_CAST_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_QUANT_CAST_INL_H_
#undef NORMCHECK_SIMD_QUANT_CAST_INL_H_
#else
#define NORMCHECK_SIMD_QUANT_CAST_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The e4m3fn code of each lane of t (saturating), in the low byte of a
// 32-bit lane, the other bytes zero.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> CastToE4m3(D d, hn::Vec<D> t) {
  const hn::RebindToUnsigned<D> du;
  // |t| clamped to 448; a NaN lane is replaced below, whatever Min gives it
  const auto mag = hn::Min(hn::Abs(t), hn::Set(d, 448.0f));
  const auto a = hn::BitCast(du, mag);
  const auto lowest_kept = hn::And(hn::ShiftRight<20>(a), hn::Set(du, 1u));
  const auto normal = hn::ShiftRight<20>(hn::Add(hn::Add(a, hn::Set(du, 0x7FFFFu - (120u << 23))), lowest_kept));
  const auto subnormal = hn::Sub(hn::BitCast(du, hn::Add(mag, hn::Set(d, 0x1p14f))), hn::Set(du, 0x46800000u));
  const auto code = hn::IfThenElse(hn::RebindMask(du, hn::Lt(mag, hn::Set(d, 0x1p-6f))), subnormal, normal);
  const auto finite = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(t)), hn::Set(du, 0x7Fu), code);
  return hn::OrAnd(finite, hn::ShiftRight<24>(hn::BitCast(du, t)), hn::Set(du, 0x80u));
}

// The int8 code of each lane of t (ties to even, clamped to [-128, 127], NaN
// 0) as two's complement in the low byte of a 32-bit lane (the other bytes
// are its sign extension).
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> CastToInt8(D d, hn::Vec<D> t) {
  const hn::RebindToUnsigned<D> du;
  const auto clamped = hn::Min(hn::Max(t, hn::Set(d, -128.0f)), hn::Set(d, 127.0f));
  const auto value = hn::Sub(hn::BitCast(du, hn::Add(clamped, hn::Set(d, 0x1.8p23f))), hn::Set(du, 0x4B400000u));
  return hn::IfThenZeroElse(hn::RebindMask(du, hn::IsNaN(t)), value);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_QUANT_CAST_INL_H_
