// The casts of float32 to 8-bit codes (kernels/simd/quant_cast-inl.h) on every
// target this CPU supports, against float_format.h's quant_code(f,
// quant_cast(q, t)), the exact scalar cast (e4m3fn saturating; int8 ties to
// even in [-128, 127]):
//  - (test_quant_cast_every_float, nightly: 6 to 25 s a target here) every
//    one of the 2^32 float bit patterns, against the table of the
//    scalar cast's values: for each sign, the magnitudes that share a code
//    are one run of consecutive patterns (the cast is monotone in |t|), and
//    the table holds each run's first pattern and code, found by bisection
//    with quant_cast itself; NaNs (one code per sign) by quant_cast of the
//    first NaN of each sign;
//  - directly against quant_cast: the 17 patterns around the start of every
//    run (so every rounding boundary, ties included, and the table's ends),
//    NaNs with several payloads, and 2^20 random patterns.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "test_quant_cast.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"
#include "simd/quant_cast-inl.h"

#ifndef NORMCHECK_TEST_QUANT_CAST_FORMAT_
#define NORMCHECK_TEST_QUANT_CAST_FORMAT_
#include "normcheck/float_format.h"
#endif

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// out[i] = the code of the float with bits first + i (i < n), for n a
// multiple of the lane count, or of in[i] when in is not null.
void CastForTest(QuantFormat format, const float* in, uint32_t first, uint8_t* out, size_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < n; i += N) {
    const auto t = in ? hn::LoadU(d, in + i)
                      : hn::BitCast(d, hn::Iota(du, static_cast<uint32_t>(first + i)));
    const auto code = format == QuantFormat::e4m3 ? CastToE4m3(d, t) : CastToInt8(d, t);
    hn::StoreU(hn::TruncateTo(d8, code), d8, out + i);
  }
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

#include "simd_test_support.h"
#include "test_seed.h"

namespace normcheck::simd {
HWY_EXPORT(CastForTest);
}  // namespace normcheck::simd

namespace normcheck {
namespace {

// The casts the kernels declare: e4m3fn saturating, int8 ties to even, [-128, 127].
QuantCast cast_of(QuantFormat f) { return QuantCast{.format = f}; }

uint8_t want(QuantFormat f, uint32_t bits) {
  return quant_code(f, quant_cast(cast_of(f), static_cast<double>(std::bit_cast<float>(bits))));
}

// A run of patterns sharing a code: from `first` to the next run's first.
struct CodeRun {
  uint32_t first;
  uint8_t code;
};

// The runs of the patterns from `sign` (0 or 0x80000000) to sign | inf, and
// one run for that sign's NaNs.
std::vector<CodeRun> runs_of(QuantFormat f, uint32_t sign) {
  std::vector<CodeRun> runs;
  const uint32_t inf = 0x7F800000u;
  uint32_t a = 0;
  while (true) {
    const uint8_t code = want(f, sign | a);
    runs.push_back({sign | a, code});
    // the last magnitude with this code: bisection, the codes of a run being consecutive
    uint32_t lo = a, hi = inf;
    if (want(f, sign | hi) == code) break;
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      (want(f, sign | mid) == code ? lo : hi) = mid;
    }
    a = hi;
  }
  runs.push_back({sign | (inf + 1), want(f, sign | (inf + 1))});
  return runs;
}

void cast(QuantFormat f, const float* in, uint32_t first, uint8_t* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(simd::CastForTest)(f, in, first, out, n);
}

class QuantCastTest : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(QuantCastTest);

#ifdef NORMCHECK_QUANT_CAST_EVERY_FLOAT
TEST_P(QuantCastTest, EveryFloatGivesTheScalarCastsCode) {
  for (const QuantFormat f : {QuantFormat::e4m3, QuantFormat::int8}) {
    for (const uint32_t sign : {0u, 0x80000000u}) {
      const std::vector<CodeRun> runs = runs_of(f, sign);
      constexpr size_t kBlock = size_t{1} << 16;  // a multiple of every lane count
      std::vector<uint8_t> out(kBlock);
      size_t run = 0, bad = 0;
      std::ostringstream first_bad;
      for (uint64_t start = 0; start < (uint64_t{1} << 31); start += kBlock) {
        const uint32_t first = sign | static_cast<uint32_t>(start);
        cast(f, nullptr, first, out.data(), kBlock);
        while (run + 1 < runs.size() && runs[run + 1].first <= first) ++run;
        if (run + 1 == runs.size() || runs[run + 1].first - first >= kBlock) {  // one run: one code
          size_t mismatches = 0;
          for (size_t i = 0; i < kBlock; ++i) mismatches += out[i] != runs[run].code;
          if (mismatches == 0) continue;
        }
        for (size_t i = 0; i < kBlock; ++i) {
          const uint32_t bits = first + static_cast<uint32_t>(i);
          while (run + 1 < runs.size() && runs[run + 1].first <= bits) ++run;
          if (out[i] != runs[run].code && bad++ == 0)
            first_bad << std::hex << "bits 0x" << bits << ": 0x" << int{out[i]} << ", want 0x" << int{runs[run].code};
        }
      }
      EXPECT_EQ(bad, 0u) << target() << " " << to_string(f) << " sign 0x" << std::hex << sign << ": "
                         << first_bad.str();
    }
  }
}

#endif  // NORMCHECK_QUANT_CAST_EVERY_FLOAT

TEST_P(QuantCastTest, BoundariesNaNsAndRandomFloatsGiveQuantCastsCode) {
  std::mt19937_64 rng(test::test_seed());
  for (const QuantFormat f : {QuantFormat::e4m3, QuantFormat::int8}) {
    std::vector<uint32_t> cases;
    for (const uint32_t sign : {0u, 0x80000000u}) {
      for (const CodeRun& r : runs_of(f, sign))
        for (int k = -8; k <= 8; ++k) cases.push_back(r.first + static_cast<uint32_t>(k));
      for (const uint32_t nan : {0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x7FA5A5A5u}) cases.push_back(sign | nan);
    }
    for (int i = 0; i < (1 << 20); ++i) cases.push_back(static_cast<uint32_t>(rng()));
    while (cases.size() % 64) cases.push_back(0);
    std::vector<float> in(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) in[i] = std::bit_cast<float>(cases[i]);
    std::vector<uint8_t> out(cases.size());
    cast(f, in.data(), 0, out.data(), in.size());
    size_t bad = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const uint8_t w = want(f, cases[i]);
      if (out[i] != w && bad++ < 5)
        ADD_FAILURE() << target() << " " << to_string(f) << std::hex << " bits 0x" << cases[i] << ": 0x"
                      << int{out[i]} << ", want 0x" << int{w};
    }
    EXPECT_EQ(bad, 0u) << target() << " " << to_string(f) << ", of " << cases.size();
  }
}

// The table's runs are the format's codes: e4m3fn's 127 non-negative finite
// values (0x00..0x7E, 448 last: saturation) and NaN per sign; int8's 128
// non-negative values (0..127) and 129 non-positive ones (-0 is 0's code).
TEST(QuantCastRuns, TheRunsAreTheFormatsCodes) {
  EXPECT_EQ(runs_of(QuantFormat::e4m3, 0).size(), 127u + 1);
  EXPECT_EQ(runs_of(QuantFormat::e4m3, 0).back().code, 0x7F);
  EXPECT_EQ(runs_of(QuantFormat::e4m3, 0x80000000u).size(), 127u + 1);
  EXPECT_EQ(runs_of(QuantFormat::int8, 0).size(), 128u + 1);
  EXPECT_EQ(runs_of(QuantFormat::int8, 0).back().code, 0);
  EXPECT_EQ(runs_of(QuantFormat::int8, 0x80000000u).size(), 129u + 1);
}

}  // namespace
}  // namespace normcheck
#endif  // HWY_ONCE
