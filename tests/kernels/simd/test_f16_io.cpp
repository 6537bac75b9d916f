// The f16 loads and stores of the Highway kernels (kernels/simd/hwy_io-inl.h),
// on every target this CPU supports, against the compiler's _Float16
// conversions (IEEE: widening exact, narrowing rounded to nearest even, g++
// 12): every f16 bit pattern loaded; stored, every f16 value with the float
// halfway to its successor and that halfway point's two neighbours (ties to
// even, subnormals, 65520 -> inf), a sweep over all float bit patterns
// (float subnormals, overflow, NaN), and inf/NaN by name. Arrays go through
// in pieces of 1..37 elements, so whole vectors and every row tail are used.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "test_f16_io.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// What the kernels do with an f16 row: float vectors stored with
// StoreFromFloat (WriteRow: whole vectors, then the tail through a buffer).
void StoreF16ForTest(const float* in, uint16_t* out, size_t n) {
  const hn::ScalableTag<float> d;
  WriteRow(d, reinterpret_cast<hwy::float16_t*>(out), n, false,
           [&](size_t i, size_t count) { return LoadAsFloatN(d, in + i, count); });
}

// ... and loaded with LoadAsFloat (LoadAsFloatN: whole vectors or the tail).
void LoadF16ForTest(const uint16_t* in, float* out, size_t n) {
  const hn::ScalableTag<float> d;
  const auto* h = reinterpret_cast<const hwy::float16_t*>(in);
  WriteRow(d, out, n, false,
           [&](size_t i, size_t count) { return LoadAsFloatN(d, h + i, count); });
}

}  // namespace normcheck::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "simd_test_support.h"

namespace normcheck::simd {
HWY_EXPORT(StoreF16ForTest);
HWY_EXPORT(LoadF16ForTest);
}  // namespace normcheck::simd

namespace normcheck {
namespace {

float from_f16(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
uint16_t to_f16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
bool f16_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

// Applies fn(begin, count) to [0, n) in pieces of 1, 2, ..., 37, 1, 2, ...
template <class Fn>
void in_pieces(size_t n, const Fn& fn) {
  size_t length = 1;
  for (size_t i = 0; i < n; i += length, length = length % 37 + 1) fn(i, std::min(length, n - i));
}

std::vector<float> store_cases() {
  std::vector<float> cases;
  // Each non-negative finite f16 value, the point halfway to the next one
  // (exact in float: 11 significant bits and one more) and its neighbours;
  // after 65504 the next is 65536, where the top binade's spacing leads.
  for (uint32_t h = 0; h <= 0x7BFF; ++h) {
    const float lo = from_f16(static_cast<uint16_t>(h));
    const float hi = h == 0x7BFF ? 65536.0f : from_f16(static_cast<uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;
    for (const float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, hi)}) {
      cases.push_back(v);
      cases.push_back(-v);
    }
  }
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099)
    cases.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  const float inf = std::numeric_limits<float>::infinity();
  for (const float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::signaling_NaN(),
                        std::bit_cast<float>(0x7F800001u), std::bit_cast<float>(0x7FFFFFFFu),
                        std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()})
    cases.push_back(v);
  return cases;
}

// The mismatches of `got` against `want` (NaN for NaN, else the same bits),
// the first few spelled out.
struct Mismatches {
  size_t count = 0;
  std::string first;
  void add(const std::string& what) {
    if (count++ < 8) first += what + "\n";
  }
};

class F16Io : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(F16Io);

TEST_P(F16Io, StoreRoundsToNearestEvenOnEveryTarget) {
  const std::vector<float> in = store_cases();
  std::vector<uint16_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = to_f16(in[i]);
  {
    const char* target = this->target();
    std::vector<uint16_t> got(in.size());
    in_pieces(in.size(), [&](size_t i, size_t count) {
      HWY_DYNAMIC_DISPATCH(simd::StoreF16ForTest)(in.data() + i, got.data() + i, count);
    });
    Mismatches bad;
    for (size_t i = 0; i < in.size(); ++i) {
      const bool ok = f16_is_nan(want[i]) ? f16_is_nan(got[i]) : got[i] == want[i];
      if (!ok) {
        char line[96];
        std::snprintf(line, sizeof line, "%a (0x%08x): got 0x%04x, want 0x%04x",
                      static_cast<double>(in[i]), std::bit_cast<uint32_t>(in[i]), got[i], want[i]);
        bad.add(line);
      }
    }
    EXPECT_EQ(bad.count, 0u) << target << ", of " << in.size() << ":\n" << bad.first;
  }
}

TEST_P(F16Io, LoadIsExactOnEveryTarget) {
  std::vector<uint16_t> in(0x10000);
  for (uint32_t h = 0; h < in.size(); ++h) in[h] = static_cast<uint16_t>(h);
  {
    const char* target = this->target();
    std::vector<float> got(in.size());
    in_pieces(in.size(), [&](size_t i, size_t count) {
      HWY_DYNAMIC_DISPATCH(simd::LoadF16ForTest)(in.data() + i, got.data() + i, count);
    });
    Mismatches bad;
    for (size_t h = 0; h < in.size(); ++h) {
      const float want = from_f16(in[h]);
      const bool ok = std::isnan(want)
                          ? std::isnan(got[h])
                          : std::bit_cast<uint32_t>(got[h]) == std::bit_cast<uint32_t>(want);
      if (!ok) {
        char line[96];
        std::snprintf(line, sizeof line, "0x%04x: got %a, want %a", in[h],
                      static_cast<double>(got[h]), static_cast<double>(want));
        bad.add(line);
      }
    }
    EXPECT_EQ(bad.count, 0u) << target << ":\n" << bad.first;
  }
}

}  // namespace
}  // namespace normcheck
#endif  // HWY_ONCE
