// The casts of the quantizing example plugins (examples/plugin/v2_quant.h:
// plain C, integer and exact float operations) against the rules of the
// spec, normcheck::quant_cast and quant_code (normcheck/float_format.h):
// every float with its low 12 bits zero and its two neighbours, through
// e4m3fn and e5m2 with and without saturation, and through int8 with each
// tie rule and low clamp on the half-integers and their neighbours, the
// integers, and those floats. A NaN result may be any NaN code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"

extern "C" {
#include "v2_quant.h"
}

namespace normcheck {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Calls f(t) on every float with its low 12 bits zero and on its neighbours.
template <class F>
void for_spread_floats(F f) {
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4096)
    for (int64_t d : {-1, 0, 1}) f(from_bits(static_cast<uint32_t>(static_cast<int64_t>(u) + d)));
}

TEST(QuantCasts, Fp8MatchesQuantCast) {
  int64_t mismatches = 0;
  for_spread_floats([&](float t) {
    for (QuantFormat fmt : {QuantFormat::e4m3, QuantFormat::e5m2})
      for (bool saturate : {false, true}) {
        const double v = quant_cast(QuantCast{fmt, saturate, false, false}, t);
        const uint8_t got = v2q_fp8_code(fmt == QuantFormat::e4m3 ? &v2q_e4m3 : &v2q_e5m2, t, saturate);
        const bool ok = std::isnan(v) ? std::isnan(quant_value(fmt, got)) : got == quant_code(fmt, v);
        if (!ok && ++mismatches <= 10)
          ADD_FAILURE() << to_string(fmt) << (saturate ? " saturating" : "") << " t = " << std::hexfloat << t
                        << ": code " << int(got) << ", expected " << int(quant_code(fmt, v));
      }
  });
  EXPECT_EQ(mismatches, 0);
}

TEST(QuantCasts, Int8MatchesQuantCast) {
  int64_t mismatches = 0;
  const auto check = [&](float t) {
    for (bool away : {false, true})
      for (bool symmetric : {false, true}) {
        const uint8_t want = quant_code(QuantFormat::int8, quant_cast(QuantCast{QuantFormat::int8, true, away, symmetric}, t));
        const uint8_t got = v2q_int8_code(t, away, symmetric ? -127 : -128);
        if (got != want && ++mismatches <= 10)
          ADD_FAILURE() << "int8" << (away ? " ties away" : "") << (symmetric ? " qmin -127" : "") << " t = "
                        << std::hexfloat << t << ": code " << int(got) << ", expected " << int(want);
      }
  };
  for (int k = -300; k <= 300; ++k) {
    const float half = static_cast<float>(k) + 0.5f, whole = static_cast<float>(k);
    for (float t : {half, std::nextafter(half, -1e9f), std::nextafter(half, 1e9f), whole,
                    std::nextafter(whole, -1e9f), std::nextafter(whole, 1e9f)})
      check(t);
  }
  for_spread_floats(check);
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace normcheck
