// The 16-bit loads and stores of the Highway kernels (kernels/simd/hwy_io-inl.h),
// on every target this CPU supports. f16 against the compiler's _Float16
// conversions (IEEE: widening exact, narrowing rounded to nearest even, g++
// 12): every f16 bit pattern loaded; stored, every f16 value with the float
// halfway to its successor and that halfway point's two neighbours (ties to
// even, subnormals, 65520 -> inf), a sweep over all float bit patterns
// (float subnormals, overflow, NaN), and inf/NaN by name. bf16 stores against
// float_format.h's bf16_from_float (the scalar conversion every other part of
// normcheck uses), on the same kind of cases plus NaNs whose payload an
// increment would carry into the sign. Stores go through WriteRow and
// WriteRowPairs (pairs in bf16's interleaved order, and told that no input NaN
// reaches the values, on the cases that are not NaN and the default NaNs),
// both cached and streamed (non-temporal, two vectors narrowed at a time),
// starting one element past a vector boundary, in pieces of 1..37 elements,
// so the head, whole vectors, pairs of vectors and every row tail are used.
// Every bf16 pattern loaded in pairs and stored in pairs comes back.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "test_hwy_io.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "simd/hwy_io-inl.h"

#ifndef NORMCHECK_TEST_HWY_IO_WRITER_  // once, for every target
#define NORMCHECK_TEST_HWY_IO_WRITER_
namespace normcheck::simd {
// How a test writes a 16-bit row: WriteRow (each vector from value()),
// WriteRowPairs (pairs in the storage's pair order, from LoadFloatPair), or
// WriteRowPairs told that no input NaN reaches the values.
enum class Writer { row, pairs, pairs_no_input_nan };
}  // namespace normcheck::simd
#endif

HWY_BEFORE_NAMESPACE();
namespace normcheck::simd::HWY_NAMESPACE {

// What the kernels do with a 16-bit row (`bf16` selects the format): float
// vectors stored by `writer`, around the cache with `stream`.
void Store16ForTest(bool bf16, bool stream, Writer writer, const float* in, uint16_t* out,
                    size_t n) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const auto value = [&](size_t i, size_t count) { return LoadAsFloatN(d, in + i, count); };
  const auto store = [&]<typename T>(T* y) {
    const auto pair = [&](size_t i, V& first, V& second) {
      LoadFloatPair<T>(d, in + i, first, second);
    };
    if (writer == Writer::row) {
      WriteRow(d, y, n, stream, value);
    } else if (writer == Writer::pairs) {
      WriteRowPairs(d, y, n, stream, pair, value);
    } else {
      WriteRowPairs<Values::no_input_nan>(d, y, n, stream, pair, value);
    }
  };
  if (bf16) {
    store(reinterpret_cast<hwy::bfloat16_t*>(out));
  } else {
    store(reinterpret_cast<hwy::float16_t*>(out));
  }
  if (stream) hwy::FlushStream();
}

// A bf16 row loaded in pairs (LoadWidenedPair) and stored in pairs
// (WriteRowPairs), vectors at its ends through LoadAsFloatN: the row again,
// when the two functions agree on the pair order.
void Bf16PairsRoundTripForTest(const uint16_t* in, uint16_t* out, size_t n) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const auto* x = reinterpret_cast<const hwy::bfloat16_t*>(in);
  WriteRowPairs(
      d, reinterpret_cast<hwy::bfloat16_t*>(out), n, false,
      [&](size_t i, V& first, V& second) { LoadWidenedPair(d, x + i, first, second); },
      [&](size_t i, size_t count) { return LoadAsFloatN(d, x + i, count); });
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

#include "normcheck/float_format.h"
#include "simd_test_support.h"

namespace normcheck::simd {
HWY_EXPORT(Store16ForTest);
HWY_EXPORT(Bf16PairsRoundTripForTest);
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

// Float cases for storing to f16: see the top of this file.
std::vector<float> f16_store_cases() {
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
  return cases;
}

// Float cases for storing to bf16: each bf16 bit pattern as a float, the
// point halfway to the next pattern (ties to even; from the largest finite
// value and from a NaN too) and its neighbours, and NaNs with every payload
// bit set, or set from bit 15 up (an increment carries them into the sign).
std::vector<float> bf16_store_cases() {
  std::vector<float> cases;
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint32_t bits = h << 16;
    for (const uint32_t v : {bits, bits | 0x8000u, bits | 0x7FFFu, bits | 0x8001u, bits | 0xFFFFu})
      cases.push_back(std::bit_cast<float>(v));
  }
  for (const uint32_t v : {0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FFF8001u, 0xFFFF8000u, 0x7FBFFFFFu})
    cases.push_back(std::bit_cast<float>(v));
  return cases;
}

// Cases every format gets: a sweep over all float bit patterns (float
// subnormals, overflow, NaN), and inf/NaN by name.
void add_common_cases(std::vector<float>& cases) {
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099)
    cases.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  const float inf = std::numeric_limits<float>::infinity();
  for (const float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::signaling_NaN(),
                        std::bit_cast<float>(0x7F800001u), std::bit_cast<float>(0x7FFFFFFFu),
                        std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::denorm_min()})
    cases.push_back(v);
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

class HwyIo : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(HwyIo);

// Stores `in` through each writer (cached, then streamed) and counts every
// pattern that is not `want` (a NaN for a NaN, else the same bits). The
// writer told that no input NaN reaches the values gets the cases that are
// not NaN and the default NaNs that invalid operations produce (0xFFC00000 on
// x86, 0x7FC00000 on Arm).
void expect_stores(const char* target, bool bf16, const std::vector<float>& all_in,
                   const std::vector<uint16_t>& all_want, bool (*is_nan)(uint16_t)) {
  using simd::Writer;
  std::vector<float> numbers;
  std::vector<uint16_t> numbers_want;
  for (size_t i = 0; i < all_in.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(all_in[i]);
    if (std::isnan(all_in[i]) && (bits & 0x7FFFFFFFu) != 0x7FC00000u) continue;
    numbers.push_back(all_in[i]);
    numbers_want.push_back(all_want[i]);
  }
  for (const Writer writer : {Writer::row, Writer::pairs, Writer::pairs_no_input_nan})
  for (const bool stream : {false, true}) {
    const bool no_input_nan = writer == Writer::pairs_no_input_nan;
    const std::vector<float>& in = no_input_nan ? numbers : all_in;
    const std::vector<uint16_t>& want = no_input_nan ? numbers_want : all_want;
    // One element past a 64-byte boundary: the streamed head runs.
    std::vector<uint16_t> buffer(in.size() + 32);
    const size_t to_line = (32 - reinterpret_cast<uintptr_t>(buffer.data()) % 64 / 2) % 32;
    uint16_t* got = buffer.data() + to_line + 1;
    in_pieces(in.size(), [&](size_t i, size_t count) {
      HWY_DYNAMIC_DISPATCH(simd::Store16ForTest)(bf16, stream, writer, in.data() + i, got + i,
                                                 count);
    });
    Mismatches bad;
    for (size_t i = 0; i < in.size(); ++i) {
      const bool ok = is_nan(want[i]) ? is_nan(got[i]) : got[i] == want[i];
      if (!ok) {
        char line[96];
        std::snprintf(line, sizeof line, "%a (0x%08x): got 0x%04x, want 0x%04x",
                      static_cast<double>(in[i]), std::bit_cast<uint32_t>(in[i]), got[i], want[i]);
        bad.add(line);
      }
    }
    EXPECT_EQ(bad.count, 0u) << target << (stream ? ", streamed" : ", cached") << ", writer "
                             << static_cast<int>(writer) << ", of " << in.size() << ":\n"
                             << bad.first;
  }
}

TEST_P(HwyIo, F16StoreRoundsToNearestEvenOnEveryTarget) {
  std::vector<float> in = f16_store_cases();
  add_common_cases(in);
  std::vector<uint16_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = to_f16(in[i]);
  expect_stores(this->target(), false, in, want, f16_is_nan);
}

TEST_P(HwyIo, Bf16StoreRoundsToNearestEvenOnEveryTarget) {
  std::vector<float> in = bf16_store_cases();
  add_common_cases(in);
  std::vector<uint16_t> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = bf16_from_float(in[i]);
  // A NaN must stay a NaN, with the bits the scalar conversion keeps.
  expect_stores(this->target(), true, in, want, [](uint16_t) { return false; });
}

TEST_P(HwyIo, Bf16PairsRoundTripOnEveryTarget) {
  std::vector<uint16_t> in(0x10000);
  for (uint32_t h = 0; h < in.size(); ++h) in[h] = static_cast<uint16_t>(h);
  std::vector<uint16_t> got(in.size());
  in_pieces(in.size(), [&](size_t i, size_t count) {
    HWY_DYNAMIC_DISPATCH(simd::Bf16PairsRoundTripForTest)(in.data() + i, got.data() + i, count);
  });
  Mismatches bad;
  for (size_t h = 0; h < in.size(); ++h) {
    // A NaN keeps its bits with the quiet bit set (bf16_from_float).
    const bool nan = (in[h] & 0x7F80) == 0x7F80 && (in[h] & 0x7F) != 0;
    const uint16_t want = nan ? static_cast<uint16_t>(in[h] | 0x40) : in[h];
    if (got[h] != want) {
      char line[64];
      std::snprintf(line, sizeof line, "0x%04x: got 0x%04x", in[h], got[h]);
      bad.add(line);
    }
  }
  EXPECT_EQ(bad.count, 0u) << this->target() << ":\n" << bad.first;
}

TEST_P(HwyIo, F16LoadIsExactOnEveryTarget) {
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
