// The 8-bit output formats of float_format.h (QuantFormat): every fp8 code
// decoded from its bit fields by the OCP definitions, written out here
// independently; encoding, the cast's rounding (to nearest even at every
// midpoint between consecutive codes, int8's ties and clamps), its overflow
// with and without saturation, and the code line of quant_position.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"  // to_string(QuantFormat)

namespace normcheck {
namespace {

// OCP 8-bit floating point (v1.0): e4m3fn has bias 7, no infinities, and
// S.1111.111 as its only NaN; e5m2 has bias 15 and IEEE's infinities and NaNs.
double ocp_value(QuantFormat f, unsigned code) {
  const bool e4m3 = f == QuantFormat::e4m3;
  const unsigned mbits = e4m3 ? 3 : 2, ebits = e4m3 ? 4 : 5;
  const int bias = e4m3 ? 7 : 15;
  const unsigned m = code & ((1u << mbits) - 1), e = (code >> mbits) & ((1u << ebits) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (e4m3 && e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  if (!e4m3 && e == 31) return m == 0 ? sign * INFINITY : std::numeric_limits<double>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<double>(m), 1 - bias - static_cast<int>(mbits));
  return sign * std::ldexp(static_cast<double>((1u << mbits) + m), static_cast<int>(e) - bias - static_cast<int>(mbits));
}

constexpr QuantFormat kFp8[] = {QuantFormat::e4m3, QuantFormat::e5m2};

TEST(QuantFormat, EveryFp8CodeHasItsOcpValueAndEncodesBack) {
  for (QuantFormat f : kFp8)
    for (unsigned c = 0; c < 256; ++c) {
      const double v = ocp_value(f, c), got = quant_value(f, static_cast<uint8_t>(c));
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(got)) << to_string(f) << " " << c;
        continue;
      }
      EXPECT_EQ(got, v) << to_string(f) << " code " << c;
      EXPECT_EQ(quant_code(f, v), c) << to_string(f) << " value " << v;
      EXPECT_EQ(quant_cast({f, false}, v), v);  // a value of the format casts to itself
    }
  EXPECT_EQ(quant_max(QuantFormat::e4m3), ocp_value(QuantFormat::e4m3, 0x7e));
  EXPECT_EQ(quant_max(QuantFormat::e5m2), ocp_value(QuantFormat::e5m2, 0x7b));
}

// The finite non-negative values of the format, ascending (+0 first).
std::vector<double> ascending(QuantFormat f) {
  std::vector<double> v;
  for (unsigned c = 0; c < 0x80; ++c)
    if (std::isfinite(ocp_value(f, c))) v.push_back(ocp_value(f, c));
  return v;
}

TEST(QuantFormat, TheCastRoundsToNearestEvenBetweenConsecutiveCodes) {
  for (QuantFormat f : kFp8)
    for (bool saturate : {true, false}) {
      const QuantCast q{f, saturate};
      const std::vector<double> v = ascending(f);
      for (std::size_t i = 0; i + 1 < v.size(); ++i) {
        const double mid = (v[i] + v[i + 1]) / 2, even = (quant_code(f, v[i]) & 1) == 0 ? v[i] : v[i + 1];
        for (double sign : {1.0, -1.0}) {
          EXPECT_EQ(quant_cast(q, sign * mid), sign * even) << to_string(f) << " " << mid;
          EXPECT_EQ(quant_cast(q, sign * std::nextafter(mid, 0.0)), sign * v[i]);
          EXPECT_EQ(quant_cast(q, sign * std::nextafter(mid, INFINITY)), sign * v[i + 1]);
        }
        EXPECT_EQ(quant_position(f, v[i + 1]) - quant_position(f, v[i]), 1);  // one code apart
        EXPECT_GT(quant_position(f, mid), quant_position(f, v[i]));
        EXPECT_LT(quant_position(f, mid), quant_position(f, v[i + 1]));
        EXPECT_EQ(quant_spacing(f, v[i]), v[i + 1] - v[i]) << to_string(f) << " " << v[i];
      }
    }
}

TEST(QuantFormat, OverflowSaturatesOrGivesTheFormatsOverflowValue) {
  // e4m3fn: the top binade's spacing is 32, so 464 is the midpoint past 448 (ties to 448, even)
  EXPECT_EQ(quant_cast({QuantFormat::e4m3, true}, 1e30), 448);
  EXPECT_EQ(quant_cast({QuantFormat::e4m3, true}, -INFINITY), -448);
  EXPECT_EQ(quant_cast({QuantFormat::e4m3, false}, 464), 448);
  EXPECT_TRUE(std::isnan(quant_cast({QuantFormat::e4m3, false}, std::nextafter(464.0, 1e3))));
  EXPECT_TRUE(std::isnan(quant_cast({QuantFormat::e4m3, false}, INFINITY)));
  // e5m2: IEEE's overflow threshold 61440 = 57344 + 8192 / 2 (ties to the infinity, 65536's even code)
  EXPECT_EQ(quant_cast({QuantFormat::e5m2, false}, std::nextafter(61440.0, 0.0)), 57344);
  EXPECT_EQ(quant_cast({QuantFormat::e5m2, false}, -61440), -INFINITY);
  EXPECT_EQ(quant_cast({QuantFormat::e5m2, true}, 1e30), 57344);
  EXPECT_EQ(quant_code(QuantFormat::e4m3, NAN), 0x7f);
  EXPECT_EQ(quant_code(QuantFormat::e5m2, -INFINITY), 0xfc);
  // the overflow value sits one code past the largest on the code line
  EXPECT_EQ(quant_position(QuantFormat::e5m2, INFINITY), quant_position(QuantFormat::e5m2, 57344) + 1);
}

TEST(QuantFormat, Int8RoundsItsTiesAsDeclaredAndClamps) {
  const QuantCast even{QuantFormat::int8}, away{QuantFormat::int8, true, true}, sym{QuantFormat::int8, true, false, true};
  const double t[] = {2.5, 3.5, -2.5, -3.5, 0.5, -0.5, 2.4999999, 126.5, 127.5, -127.5, -128.5, -1e9, 1e9};
  const double want_even[] = {2, 4, -2, -4, 0, -0.0, 2, 126, 127, -128, -128, -128, 127};
  const double want_away[] = {3, 4, -3, -4, 1, -1, 2, 127, 127, -128, -128, -128, 127};
  for (std::size_t i = 0; i < std::size(t); ++i) {
    EXPECT_EQ(quant_cast(even, t[i]), want_even[i]) << t[i];
    EXPECT_EQ(quant_cast(away, t[i]), want_away[i]) << t[i];
    EXPECT_EQ(quant_cast(sym, t[i]), std::max(want_even[i], -127.0)) << t[i];
  }
  EXPECT_EQ(quant_cast(even, NAN), 0);  // no NaN code: what the hardware's saturating conversion gives
  for (int v = -128; v <= 127; ++v) EXPECT_EQ(quant_value(QuantFormat::int8, quant_code(QuantFormat::int8, v)), v);
}

}  // namespace
}  // namespace normcheck
