// Per-target helpers shared by the Highway kernels: float32 vectors loaded
// from and stored to float32, bf16 or f16 storage (row tails through a small
// buffer, so no access leaves the row), and a fixed-order lane reduction.
//
// Included once per target (the Highway -inl.h convention): the guard flips
// with HWY_TARGET_TOGGLE.
#if defined(NORMCHECK_SIMD_HWY_IO_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef NORMCHECK_SIMD_HWY_IO_INL_H_
#undef NORMCHECK_SIMD_HWY_IO_INL_H_
#else
#define NORMCHECK_SIMD_HWY_IO_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "normcheck/kernel.h"
#include "simd/row_driver.h"

// The kernels' inner-loop lambdas (WriteRow's value functions, the steps of
// the backward's column sums) are always inlined: GCC 12 leaves a lambda
// called from several places in a loop out of line, where it takes its
// accumulators by reference, through memory, and costs a call per vector
// (61% of the backward's time at 64x768). Not under AddressSanitizer, whose
// builds check memory, not speed: there forced inlining made
// layernorm_bwd_hwy16.cpp take 176 s to compile, not 47.
#ifndef NORMCHECK_INLINE_LAMBDA
#if HWY_COMPILER_MSVC || HWY_IS_ASAN || defined(__SANITIZE_ADDRESS__)  // GCC: the latter
#define NORMCHECK_INLINE_LAMBDA HWY_ATTR
#else
#define NORMCHECK_INLINE_LAMBDA HWY_ATTR __attribute__((always_inline))
#endif
#endif

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Highest lane count of any target: sizes the tail buffers.
inline constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// The float vectors of a row computed in float32 on storage T: at most 8
// lanes for f16 (256 bits on AVX-512), full width otherwise. On this Zen 4
// the f16 LayerNorm rows with 16-lane vectors (512-bit F16C conversions)
// took 1.3 to 1.5 times as long as with 8 lanes on a memory-bound 4096x4096
// or 256x65536 call (one and two threads, alternating runs), and as long on
// rows in cache; bf16 (integer rounding) and float32 rows are faster at full
// width. The bounds hold for any lane count (summation_depth assumes one).
template <typename T>
using FloatTag = std::conditional_t<std::is_same_v<T, hwy::float16_t>, hn::CappedTag<float, 8>,
                                    hn::ScalableTag<float>>;

// A vector's lanes in memory: what per-lane partial sums travel in through the
// target-independent row_driver.h (a vector returned through code compiled
// without the target's flags would change the calling convention).
struct LaneSums {
  HWY_ALIGN float lane[kMaxLanes];
};

// Calls f.template operator()<T>() with T the Highway type of the 16-bit
// storage format (DType::bf16 or DType::f16): how one kernel body serves both.
template <class F>
HWY_INLINE void WithStorage16(DType storage, const F& f) {
  if (storage == DType::bf16) {
    f.template operator()<hwy::bfloat16_t>();
  } else {
    f.template operator()<hwy::float16_t>();
  }
}

// Prefetches the cache line holding p for reading into L2 (prefetcht1), not
// L1: for what a later pass or row reads, which in L1 would evict what the
// current one is reading.
HWY_INLINE void PrefetchToL2(const void* p) {
#if HWY_COMPILER_MSVC
  hwy::Prefetch(static_cast<const char*>(p));  // prefetcht0: every level
#else
  __builtin_prefetch(p, /*read*/ 0, /*L2*/ 2);
#endif
}

// The forward rows' prefetch: while a row's output pass writes it (FastRow's
// pass C, RmsRow's pass 2, AccurateRow's pass C), a later row is fetched, so
// that its sums pass finds it in cache and reading memory overlaps the
// writes. Both choices were measured (docs/performance.md, "How far ahead
// the forward rows prefetch"):
//  - which row (FwdRowToPrefetch): the next for a float row; the one after
//    it for a 16-bit row, which writes half the bytes, so that the next
//    row's fetch had about half as long to land and its sums pass waited on
//    memory (the row after next is as many bytes ahead as a float row's
//    next). The float32 LayerNorm row ran slower fetching the row after
//    next (1.04 to 1.08 times as long, one thread).
//  - which cache (FwdPrefetch's into_l1): L1 only for the float32 LayerNorm
//    row whose output streams. Its sums pass (three float operations per
//    vector of float data) reads faster than any other here, and fetching
//    into L2 made it 1.13 to 1.17 times as long. The other rows ran as fast
//    or faster fetching into L2 (PrefetchToL2), which leaves L1 to the row in
//    hand (medians of alternating runs, one and two threads, against L1):
//    the float32 rows whose output stays cached (4096x1024) 0.60 to 0.75 of
//    the time, the float32 RMSNorm row (float64 sums) 0.71 to 1.01 on the
//    larger shapes, the accurate row 0.74 to 0.86 on 4096x1024 and 0.92 to
//    1.07 on the larger shapes.
template <typename T>
HWY_INLINE const T* FwdRowToPrefetch(const RowsAhead<T>& ahead) {
  return std::is_same_v<T, float> ? ahead.next : ahead.after_next;
}
HWY_INLINE void FwdPrefetch(const void* p, bool into_l1) {
  if (into_l1) {
    hwy::Prefetch(static_cast<const char*>(p));
  } else {
    PrefetchToL2(p);
  }
}

// The 16-bit patterns a C entry point passes, as the storage type T.
template <typename T>
HWY_INLINE const T* As16(const uint16_t* p) {
  return reinterpret_cast<const T*>(p);
}
template <typename T>
HWY_INLINE T* As16(uint16_t* p) {
  return reinterpret_cast<T*>(p);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadAsFloat(D d, const float* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadAsFloat(D d, const hwy::bfloat16_t* HWY_RESTRICT p) {
  const hn::Rebind<hwy::bfloat16_t, D> d16;
  return hn::PromoteTo(d, hn::LoadU(d16, p));
}
// f16 <-> float32: Highway 1.0.3 converts with F16C on AVX2 and AVX3 (IEEE:
// exact widening, narrowing rounded to nearest even); its emulation on the
// other targets (SCALAR, SSSE3, SSE4) truncates, and maps f16 inf/NaN and
// float overflow, inf and NaN to finite values. There we convert by bits
// (tests/kernels/simd/test_hwy_io.cpp checks every target against the compiler's
// _Float16 conversions). Re-included per target: the macro is decided anew.
#undef NORMCHECK_F16_BY_BITS
#if HWY_TARGET >= HWY_SSE4 || defined(HWY_DISABLE_F16C)
#define NORMCHECK_F16_BY_BITS 1
#endif

template <class D>
HWY_INLINE hn::Vec<D> LoadAsFloat(D d, const hwy::float16_t* HWY_RESTRICT p) {
  const hn::Rebind<hwy::float16_t, D> d16;
#ifdef NORMCHECK_F16_BY_BITS
  // The f16 magnitude bits shifted into place are the float value times
  // 2^-112 (subnormals included: both formats' subnormals end at the same
  // bit), so one exact multiplication rescales them; inf and NaN (exponent
  // 31) take float's all-ones exponent instead, keeping a NaN's payload.
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint16_t, D> du16;
  const auto bits = hn::PromoteTo(du, hn::BitCast(du16, hn::LoadU(d16, p)));
  const auto magnitude = hn::ShiftLeft<13>(hn::And(bits, hn::Set(du, 0x7FFFu)));
  const auto nonfinite =  // f16 exponent 31: magnitude >= 0x7C00 << 13
      hn::RebindMask(d, hn::Gt(hn::BitCast(di, magnitude), hn::Set(di, 0x0F7FFFFF)));
  const auto value = hn::IfThenElse(
      nonfinite, hn::BitCast(d, hn::Or(magnitude, hn::Set(du, 0x7F800000u))),
      hn::Mul(hn::BitCast(d, magnitude), hn::Set(d, 0x1p112f)));
  return hn::Or(value, hn::BitCast(d, hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)))));
#else
  return hn::PromoteTo(d, hn::LoadU(d16, p));
#endif
}

// What a writer knows of the values it stores. no_input_nan: no NaN from an
// input reaches them, so a NaN among them can only be what an invalid
// operation (0 * inf, inf - inf) produces, the default NaN: quiet, payload
// zero (0xFFC00000 on x86, 0x7FC00000 on Arm), which the bf16 rounding keeps
// without the NaN lanes' select (0xFFC00000 + 0x7FFF stays within 0xFFC0xxxx).
// Leaving the select out saves about a tenth of a bf16 LayerNorm forward row's
// time in cache. f16 conversions ignore it.
enum class Values { any, no_input_nan };

template <class D>
HWY_INLINE void StoreFromFloat(D d, hn::Vec<D> v, float* HWY_RESTRICT p) {
  hn::StoreU(v, d, p);
}
// bf16 with round-to-nearest-even (Highway 1.0.3's DemoteTo truncates), in the
// upper 16 bits of each 32-bit lane (the lower 16 are not part of it): adding
// 0x7FFF plus the lowest kept bit rounds the 16 dropped bits, a carry moving
// on into the exponent (overflow to inf included). A NaN is not rounded but
// keeps its top bits with the quiet bit set: an increment could carry its
// payload through the exponent into the sign (0x7FFFFFFF would become -0).
// With kValues == Values::no_input_nan (a NaN in v can only be the default
// NaN) the NaN lanes' test and select, two of the six operations, are left out.
template <Values kValues = Values::any, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Bf16InUpperHalf(D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, v);
  const auto lowest_kept = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), lowest_kept));
  (void)d;
  if constexpr (kValues == Values::no_input_nan) return rounded;
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(bits, hn::Set(du, 0x00400000u)),
                        rounded);
}
// Bits16 gives the 16-bit patterns (lanes of Rebind<uint16_t, D>) that
// StoreFromFloat stores; Bits16Pair (below) those of two vectors at once, as
// one vector of their bytes, which WriteRow and WriteRowPairs store.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, D>> Bits16(D d, hn::Vec<D> v,
                                                   const hwy::bfloat16_t* /* format */) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint16_t, D> du16;
  return hn::DemoteTo(du16, hn::BitCast(di, hn::ShiftRight<16>(Bf16InUpperHalf(d, v))));
}
template <class D>
HWY_INLINE void StoreFromFloat(D d, hn::Vec<D> v, hwy::bfloat16_t* HWY_RESTRICT p) {
  const hn::Rebind<uint16_t, D> du16;
  hn::StoreU(Bits16(d, v, p), du16, reinterpret_cast<uint16_t*>(p));
}
// f16 rounded to nearest even (see LoadAsFloat above for the targets).
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, D>> Bits16(D d, hn::Vec<D> v,
                                                   const hwy::float16_t* /* format */) {
  const hn::Rebind<hwy::float16_t, D> d16;
  const hn::Rebind<uint16_t, D> du16;
#ifdef NORMCHECK_F16_BY_BITS
  // By magnitude a = |v| (float bits): a >= 2^16 (and inf) is inf, NaN a
  // quiet NaN; a normal f16 (a >= 2^-14) rebiases the exponent and rounds
  // the 13 dropped bits to nearest even by adding 0xFFF plus the lowest kept
  // bit (a carry moves on into the exponent: 65520 and up become inf); a
  // smaller a is added to 0.5, whose ulp is the f16 subnormal spacing 2^-24,
  // so the float addition rounds it (nearest even) and the low bits of the
  // sum are the f16 bits (2^-14 itself included).
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, v);
  const auto sign = hn::ShiftRight<16>(hn::And(bits, hn::Set(du, 0x80000000u)));
  const auto a = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const auto ai = hn::BitCast(di, a);
  const auto lowest_kept = hn::And(hn::ShiftRight<13>(a), hn::Set(du, 1u));
  // (15 - 127) << 23 wraps to 0xC8000000: the exponent rebias
  const auto normal =
      hn::ShiftRight<13>(hn::Add(a, hn::Add(hn::Set(du, 0xC8000FFFu), lowest_kept)));
  const auto subnormal = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(d, a), hn::Set(d, 0.5f))),
                                 hn::Set(du, 0x3F000000u));
  const auto nonfinite = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, 0x7F800000))),
                                        hn::Set(du, 0x7E00u), hn::Set(du, 0x7C00u));
  auto h = hn::IfThenElse(hn::RebindMask(du, hn::Lt(ai, hn::Set(di, 0x38800000))), subnormal,
                          normal);
  h = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, 0x477FFFFF))), nonfinite, h);
  (void)d16;
  return hn::DemoteTo(du16, hn::BitCast(di, hn::Or(h, sign)));
#else
  (void)d;
  return hn::BitCast(du16, hn::DemoteTo(d16, v));
#endif
}
template <class D>
HWY_INLINE void StoreFromFloat(D d, hn::Vec<D> v, hwy::float16_t* HWY_RESTRICT p) {
  const hn::Rebind<uint16_t, D> du16;
  hn::StoreU(Bits16(d, v, p), du16, reinterpret_cast<uint16_t*>(p));
}

// Whether the n floats at p (none if p is null) are all finite: their
// magnitude bits all below those of infinity.
HWY_INLINE bool AllFinite(const float* HWY_RESTRICT p, size_t n) {
  if (!p) return true;
  const hn::ScalableTag<uint32_t> du;
  const size_t N = hn::Lanes(du);
  const auto* bits = reinterpret_cast<const uint32_t*>(p);
  const auto magnitude = hn::Set(du, 0x7FFFFFFFu);
  auto largest = hn::Zero(du);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    largest = hn::Max(largest, hn::And(hn::LoadU(du, bits + i), magnitude));
  }
  uint32_t tail = 0;
  for (; i < n; ++i) tail = std::max(tail, bits[i] & 0x7FFFFFFFu);
  return std::max(tail, hn::GetLane(hn::MaxOfLanes(du, largest))) < 0x7F800000u;
}

// Calls f.template operator()<kValues>() with Values::no_input_nan when T is
// bf16 (the one format whose rounding uses it) and finite() says no NaN can
// reach the results from the caller's operands; Values::any otherwise,
// without asking.
template <typename T, class Finite, class F>
HWY_INLINE void WithValues(const Finite& finite, const F& f) {
  if constexpr (std::is_same_v<T, hwy::bfloat16_t>) {
    if (finite()) return f.template operator()<Values::no_input_nan>();
  }
  f.template operator()<Values::any>();
}

// The pair order of storage T: how two float vectors of d hold 2 Lanes(d)
// consecutive elements in LoadWidenedPair, LoadFloatPair and WriteRowPairs.
// bf16 on vector targets: the even-indexed elements, then the odd-indexed
// ones, which are the low and high halves of the 32-bit lanes of one vector
// of bf16 values, so one shift or one mask widens each and a shift and a
// bit select join them again, where widening a half vector (vpmovzxwd) and
// joining two (vpermt2w) shuffle lanes across the vector. Else the first
// Lanes(d) elements, then the next (also on big-endian machines, where the
// halves would swap roles). Sums are then taken in another order (a bound
// holds for any assignment of elements to lanes).
template <typename T>
inline constexpr bool kInterleavedPairs = std::is_same_v<T, hwy::bfloat16_t> &&
                                          HWY_TARGET != HWY_SCALAR &&
                                          std::endian::native == std::endian::little;

#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to combine
// The 16-bit patterns of the 2 Lanes(d) elements that `first` and `second`
// hold, consecutive (kInterleaved false) or in bf16's interleaved pair order,
// as one vector of their bytes. bf16, consecutive: the upper halves of the
// 32-bit lanes of both vectors, picked by one two-vector permutation
// (AVX-512) instead of narrowing each vector; interleaved: the upper half of
// each lane of `second` above the upper half of the same lane of `first`.
template <bool kInterleaved, Values kValues, class D>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, D>> Bits16Pair(D d, hn::Vec<D> first,
                                                            hn::Vec<D> second,
                                                            const hwy::bfloat16_t* format) {
  const hn::Repartition<uint16_t, D> dw;
  if constexpr (kInterleaved) {
    const hn::RebindToUnsigned<D> du;
    return hn::BitCast(dw, hn::OrAnd(hn::ShiftRight<16>(Bf16InUpperHalf<kValues>(d, first)),
                                     Bf16InUpperHalf<kValues>(d, second),
                                     hn::Set(du, 0xFFFF0000u)));
  } else if constexpr (hn::MaxLanes(dw) * sizeof(uint16_t) >= 16) {
    return hn::ConcatOdd(dw, hn::BitCast(dw, Bf16InUpperHalf<kValues>(d, second)),
                         hn::BitCast(dw, Bf16InUpperHalf<kValues>(d, first)));
  } else {
    return hn::Combine(dw, Bits16(d, second, format), Bits16(d, first, format));
  }
}
template <bool kInterleaved, Values kValues, class D>
HWY_INLINE hn::Vec<hn::Repartition<uint16_t, D>> Bits16Pair(D d, hn::Vec<D> first,
                                                            hn::Vec<D> second,
                                                            const hwy::float16_t* format) {
  static_assert(!kInterleaved, "f16 pairs are consecutive");
  const hn::Repartition<uint16_t, D> dw;
  return hn::Combine(dw, Bits16(d, second, format), Bits16(d, first, format));
}
#endif

// Row tails and heads: count < Lanes(d) elements. AVX-512 loads and stores
// them under a lane mask, which touches no memory of the other lanes; other
// targets copy through a small buffer. On this Zen 4 the copies (a call, and
// loads that cannot take their data from the copy's stores) cost a streamed
// 16-bit forward on arrays 16 bytes off alignment about a fifth of its time
// (every 1024-element chunk has a head and a tail there): with masks, 0.80
// (bf16) and 0.83 (f16) of the time on 4096x4096, one thread, alternating.
#undef NORMCHECK_MASKED_MEMORY
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define NORMCHECK_MASKED_MEMORY 1
#endif

// The first `count` (< Lanes(d)) elements at p; the other lanes are zero.
template <class D, typename T>
HWY_INLINE hn::Vec<D> LoadAsFloatTail(D d, const T* HWY_RESTRICT p, size_t count) {
#ifdef NORMCHECK_MASKED_MEMORY
  const hn::Rebind<T, D> dt;
  const auto v = hn::MaskedLoad(hn::FirstN(dt, count), dt, p);
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return hn::PromoteTo(d, v);
  }
#else
  HWY_ALIGN T buffer[kMaxLanes] = {};
  std::memcpy(buffer, p, count * sizeof(T));
  return LoadAsFloat(d, buffer);
#endif
}

// Stores the first `count` (< Lanes(d)) lanes of v to p.
template <class D, typename T>
HWY_INLINE void StoreFromFloatTail(D d, hn::Vec<D> v, T* HWY_RESTRICT p, size_t count) {
#ifdef NORMCHECK_MASKED_MEMORY
  if constexpr (std::is_same_v<T, float>) {
    hn::BlendedStore(v, hn::FirstN(d, count), d, p);
  } else {
    const hn::Rebind<uint16_t, D> du16;
    hn::BlendedStore(Bits16(d, v, p), hn::FirstN(du16, count), du16,
                     reinterpret_cast<uint16_t*>(p));
  }
#else
  HWY_ALIGN T buffer[kMaxLanes];
  StoreFromFloat(d, v, buffer);
  std::memcpy(p, buffer, count * sizeof(T));
#endif
}

// Lanes(d) elements at p (float, bf16 or f16 storage) as d's lanes: float,
// or float64 (every stored value is exact in both); the Tail form loads
// count < Lanes(d) elements and zeros the rest.
template <class D, typename T>
HWY_INLINE hn::Vec<D> LoadWidened(D d, const T* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
    return LoadAsFloat(d, p);
  } else {
    return hn::PromoteTo(d, LoadAsFloat(hn::Rebind<float, D>(), p));
  }
}
template <class D, typename T>
HWY_INLINE hn::Vec<D> LoadWidenedTail(D d, const T* HWY_RESTRICT p, size_t count) {
  if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
    return LoadAsFloatTail(d, p, count);
  } else {
    return hn::PromoteTo(d, LoadAsFloatTail(hn::Rebind<float, D>(), p, count));
  }
}

// The 2 Lanes(d) elements at p as d's lanes, in T's pair order
// (kInterleavedPairs) when d holds floats, consecutive when it holds float64.
template <class D, typename T>
HWY_INLINE void LoadWidenedPair(D d, const T* HWY_RESTRICT p, hn::Vec<D>& first,
                                hn::Vec<D>& second) {
  if constexpr (kInterleavedPairs<T> && std::is_same_v<hn::TFromD<D>, float>) {
    const hn::Repartition<uint16_t, D> dw;
    const hn::RebindToUnsigned<D> du;
    const auto halves = hn::BitCast(du, hn::LoadU(dw, reinterpret_cast<const uint16_t*>(p)));
    first = hn::BitCast(d, hn::ShiftLeft<16>(halves));
    second = hn::BitCast(d, hn::And(halves, hn::Set(du, 0xFFFF0000u)));
  } else {
    first = LoadWidened(d, p);
    second = LoadWidened(d, p + hn::Lanes(d));
  }
}

// The 2 Lanes(d) floats at p (gamma, beta) in the pair order of storage T:
// what multiplies the elements LoadWidenedPair gives.
template <typename T, class D>
HWY_INLINE void LoadFloatPair(D d, const float* HWY_RESTRICT p, hn::Vec<D>& first,
                              hn::Vec<D>& second) {
  const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + hn::Lanes(d));
#if HWY_TARGET != HWY_SCALAR  // one lane: pairs are consecutive
  if constexpr (kInterleavedPairs<T>) {
    first = hn::ConcatEven(d, hi, lo);
    second = hn::ConcatOdd(d, hi, lo);
    return;
  }
#endif
  first = lo;
  second = hi;
}

// The `count` (<= Lanes(d)) elements at p: a whole vector, or a row's tail
// with the lanes from count on zero.
template <class D, typename T>
HWY_INLINE hn::Vec<D> LoadAsFloatN(D d, const T* HWY_RESTRICT p, size_t count) {
  return count == hn::Lanes(d) ? LoadAsFloat(d, p) : LoadAsFloatTail(d, p, count);
}

// p[0, count) = update(p[0, count)) for count <= Lanes(d) floats: how a row
// adds its terms into a dgamma/dbeta partial row.
template <class D, class Update>
HWY_INLINE void UpdateFloatsN(D d, float* HWY_RESTRICT p, size_t count, const Update& update) {
  if (count == hn::Lanes(d)) {
    hn::StoreU(update(hn::LoadU(d, p)), d, p);
  } else {
    StoreFromFloatTail(d, update(LoadAsFloatTail(d, p, count)), p, count);
  }
}

// Writes n outputs: pair(i, first, second) sets the two vectors holding
// elements [i, i + 2 Lanes(d)) in T's pair order if kInterleaved
// (kInterleavedPairs), else consecutive; value(i, count) gives the vector for
// elements [i, i + count) where a pair does not fit (count < Lanes(d) only at
// the row's ends). 16-bit outputs are narrowed a pair at a time (Bits16Pair);
// float outputs take value() alone. With `stream`, outputs go around the
// cache (non-temporal stores, after a head that reaches vector alignment) so
// a large output costs no read-for-ownership; callers then end with
// hwy::FlushStream(). The values do not depend on it. kValues: what the
// caller knows of the values (Values).
template <bool kInterleaved, Values kValues, class D, typename T, class PairFn, class ValueFn>
HWY_INLINE void WriteRowOf(D d, T* HWY_RESTRICT y, size_t n, bool stream, const PairFn& pair,
                           const ValueFn& value) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  const size_t bytes = N * sizeof(float);  // of one float vector
  const auto address = reinterpret_cast<uintptr_t>(y);
  if constexpr (std::is_same_v<T, float>) {
    (void)pair;
    if (stream && bytes >= 16 && address % sizeof(float) == 0) {
      const size_t head = std::min(n, (bytes - address % bytes) % bytes / sizeof(float));
      if (head) StoreFromFloatTail(d, value(0, head), y, head);
      for (i = head; i + N <= n; i += N) hn::Stream(value(i, N), d, y + i);
    }
  } else {
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to combine
    // 16-bit outputs: two float vectors make one vector of 16-bit patterns
    // (the bytes of one float vector); streamed once aligned to its size.
    if (bytes >= 16 && address % sizeof(T) == 0) {
      const hn::Repartition<uint16_t, D> dw;
      if (stream) {
        const size_t head = std::min(n, (bytes - address % bytes) % bytes / sizeof(T));
        for (; i + N <= head; i += N) StoreFromFloat(d, value(i, N), y + i);
        if (i < head) StoreFromFloatTail(d, value(i, head - i), y + i, head - i);
        i = head;
      }
      auto* bits = reinterpret_cast<uint16_t*>(y);
      for (; i + 2 * N <= n; i += 2 * N) {
        hn::Vec<D> first, second;
        pair(i, first, second);
        const auto patterns = Bits16Pair<kInterleaved, kValues>(d, first, second, y);
        if (stream) {
          hn::Stream(patterns, dw, bits + i);
        } else {
          hn::StoreU(patterns, dw, bits + i);
        }
      }
    }
#else
    (void)pair;
#endif
  }
  for (; i + N <= n; i += N) StoreFromFloat(d, value(i, N), y + i);
  if (i < n) StoreFromFloatTail(d, value(i, n - i), y + i, n - i);
}

// WriteRowOf with pairs in T's pair order: how a row whose inputs come from
// LoadWidenedPair and LoadFloatPair is written.
template <Values kValues = Values::any, class D, typename T, class PairFn, class ValueFn>
HWY_INLINE void WriteRowPairs(D d, T* HWY_RESTRICT y, size_t n, bool stream, const PairFn& pair,
                              const ValueFn& value) {
  WriteRowOf<kInterleavedPairs<T>, kValues>(d, y, n, stream, pair, value);
}

// WriteRowOf with consecutive pairs made of value() alone, any values.
template <class D, typename T, class ValueFn>
HWY_INLINE void WriteRow(D d, T* HWY_RESTRICT y, size_t n, bool stream, const ValueFn& value) {
  const size_t N = hn::Lanes(d);
  WriteRowOf<false, Values::any>(
      d, y, n, stream,
      [&](size_t i, hn::Vec<D>& first, hn::Vec<D>& second) NORMCHECK_INLINE_LAMBDA {
        first = value(i, N);
        second = value(i + N, N);
      },
      value);
}

// The sum of v's lanes by a fixed pairwise tree: ceil(log2 Lanes(d)) additions
// per lane, the same order on every call. Each level adds every lane to its
// partner at distance 1, 2, 4, ... lanes (adjacent lanes, then halves of a
// 128-bit block, blocks, 256-bit halves), so lane 0 ends up holding
// ((l0 + l1) + (l2 + l3)) + ...: the tree of adjacent pairs, a + b and b + a
// being the same float. In registers: a store and a scalar tree cost a
// 768-element row about a fifth of its time.
template <class D>
HWY_INLINE hn::TFromD<D> SumLanesPairwise(D d, hn::Vec<D> v) {
  using T = hn::TFromD<D>;
  constexpr size_t kLanes = hn::MaxLanes(D());
  constexpr size_t kBlockLanes = 16 / sizeof(T);
  static_assert(kLanes <= 4 * kBlockLanes, "wider vectors need one more level");
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to add
  if constexpr (kLanes >= 2) v = hn::Add(v, hn::Reverse2(d, v));
  if constexpr (sizeof(T) == 4 && kLanes >= 4) v = hn::Add(v, hn::Shuffle1032(v));
  if constexpr (kLanes >= 2 * kBlockLanes) v = hn::Add(v, hn::SwapAdjacentBlocks(v));
  if constexpr (kLanes >= 4 * kBlockLanes) v = hn::Add(v, hn::ConcatLowerUpper(d, v, v));
#else
  (void)d;
#endif
  return hn::GetLane(v);
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // NORMCHECK_SIMD_HWY_IO_INL_H_
