// The element checks of evaluate() (verify/evaluate/tally.h): a row taken at
// once (Tally::range_row) leaves what range_element leaves called for its
// elements in order, the figures, the worst element and the counts, over
// rows drawn to make those differ where a row is folded wrongly: equal ratios
// and equal ULP figures within and across rows, elements outside their range,
// every format, with and without ULP figures, and rows with a non-finite end
// or value.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "evaluate/tally.h"
#include "normcheck/float_format.h"
#include "normcheck/metrics.h"
#include "same_figures.h"
#include "test_seed.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Row {
  std::vector<float> computed;
  std::vector<double> lo, hi, exact, scale;
};

// A row of d elements of format t: exact values around 1, ranges of a few
// spacings around them, computed values inside, at an end, or past it; a
// few elements repeat an earlier one (an equal ratio and ULP figure later in
// the row). `nonfinite`: one element gets an infinite end or a NaN value.
Row draw(std::mt19937_64& rng, DType t, std::size_t d, bool nonfinite) {
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> steps(-3, 3), pick(0, 9);
  Row r;
  for (std::size_t j = 0; j < d; ++j) {
    if (j > 0 && pick(rng) == 0) {  // a repeat of an earlier element
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, j - 1)(rng);
      r.computed.push_back(r.computed[k]);
      r.lo.push_back(r.lo[k]);
      r.hi.push_back(r.hi[k]);
      r.exact.push_back(r.exact[k]);
      r.scale.push_back(r.scale[k]);
      continue;
    }
    const double exact = 1 + unit(rng) / 4;
    const double s = spacing(t, exact);
    const double lo = round_to_format(t, exact - s * (1 + pick(rng) % 3)), hi = round_to_format(t, exact + s * (1 + pick(rng) % 3));
    r.exact.push_back(exact);
    r.lo.push_back(lo);
    r.hi.push_back(hi);
    r.computed.push_back(static_cast<float>(round_to_format(t, exact + steps(rng) * s)));
    r.scale.push_back(pick(rng) < 5 ? 4.0 : 0.25);  // the row's scale above or below the values
  }
  if (nonfinite) {
    const std::size_t j = std::uniform_int_distribution<std::size_t>(0, d - 1)(rng);
    switch (pick(rng) % 3) {
      case 0: r.hi[j] = kInf; break;
      case 1: r.computed[j] = std::numeric_limits<float>::quiet_NaN(); break;
      default: r.computed[j] = std::numeric_limits<float>::infinity(); break;
    }
  }
  return r;
}

TEST(Tally, ARowAtOnceIsItsElementsInOrder) {
  std::mt19937_64 rng(test::fixed_seed(20261206));
  std::uniform_int_distribution<int> pick(0, 9);
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (bool with_ulp : {true, false})
      for (int trial = 0; trial < 200; ++trial) {
        Evaluation by_row, by_element;
        Tally rows(by_row, NonFinite::row_nan_or_ieee), elements(by_element, NonFinite::row_nan_or_ieee);
        // a first output beside y, so that y's entry is not the first one
        elements.range_element("mean", 0, -1, 1.0f, 1, 1, 1, DType::f32, std::nullopt);
        rows.range_element("mean", 0, -1, 1.0f, 1, 1, 1, DType::f32, std::nullopt);
        const std::size_t d = 1 + static_cast<std::size_t>(pick(rng)) * 7;
        for (int64_t row = 0; row < 4; ++row) {
          // the same row twice at times: equal figures in a later row do not replace the first
          const Row r = draw(rng, t, d, pick(rng) == 0);
          for (int copy = 0; copy < (pick(rng) < 3 ? 2 : 1); ++copy) {
            rows.range_row("y", row, r.computed, r.lo.data(), r.hi.data(), r.exact.data(), t,
                           with_ulp ? r.scale.data() : nullptr);
            for (std::size_t j = 0; j < d; ++j)
              elements.range_element("y", row, static_cast<int64_t>(j), r.computed[j], r.lo[j], r.hi[j], r.exact[j],
                                     t, with_ulp ? std::optional<double>(r.scale[j]) : std::nullopt);
          }
        }
        test::expect_same_figures(by_row, by_element, "rows");
        EXPECT_EQ(rows.outside(), elements.outside());
        if (HasFailure()) return;
      }
}

// row_ulp_figures gives ulp_figures' values bit for bit: rows whose exact
// values span float's whole range and beyond (both signs, subnormals, 0,
// past FLT_MAX), computed values a few spacings off, in another binade, or
// non-finite, and scales above, below, 0 and NaN. Of f32 and bf16 most
// elements take the closed form in vectors, the others ulp_figures.
TEST(Tally, RowUlpFiguresAreUlpFigures) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> pick(0, 19), binade(-150, 130);
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (int trial = 0; trial < 50; ++trial) {
      const std::size_t d = 1 + static_cast<std::size_t>(pick(rng)) * 5;
      std::vector<float> computed(d);
      std::vector<double> exact(d), scale(d), scaled(d), elementwise(d);
      for (std::size_t j = 0; j < d; ++j) {
        const double e = std::ldexp(1 + unit(rng), binade(rng)) * (pick(rng) < 10 ? 1 : -1);
        exact[j] = pick(rng) == 0 ? 0.0 : e;
        const double near = round_to_format(t, exact[j] + (pick(rng) - 10) * spacing(t, exact[j]));
        switch (pick(rng)) {
          case 0: computed[j] = std::numeric_limits<float>::quiet_NaN(); break;
          case 1: computed[j] = std::numeric_limits<float>::infinity(); break;
          case 2: computed[j] = static_cast<float>(round_to_format(t, exact[j] * 3)); break;  // another binade
          default: computed[j] = static_cast<float>(near);
        }
        const int s = pick(rng);
        scale[j] = s == 0 ? 0.0 : s == 1 ? NAN : std::fabs(exact[j]) * std::ldexp(1.0, pick(rng) - 10);
      }
      row_ulp_figures(t, computed, exact.data(), scale.data(), scaled.data(), elementwise.data());
      for (std::size_t j = 0; j < d; ++j) {
        const UlpFigures want = ulp_figures(t, computed[j], exact[j], scale[j]);
        EXPECT_EQ(std::bit_cast<uint64_t>(scaled[j]), std::bit_cast<uint64_t>(want.scaled))
            << static_cast<int>(t) << ": " << computed[j] << " against " << exact[j] << " at " << scale[j]
            << " (seed " << seed << ")";
        EXPECT_EQ(std::bit_cast<uint64_t>(elementwise[j]), std::bit_cast<uint64_t>(want.elementwise))
            << static_cast<int>(t) << ": " << computed[j] << " against " << exact[j] << " (seed " << seed << ")";
      }
      if (HasFailure()) return;
    }
}

// The next value of format t after v (a finite value of t) toward dir, from
// the format's own bits: float's nextafter, or one step of the 16-bit
// pattern's magnitude (sign-magnitude; both zeros step to the least subnormal
// of dir's sign). Past the largest finite value the line goes on at the top
// binade's spacing (the rule's overflow value, not the infinity).
double neighbour(DType t, double v, double dir) {
  const auto step = [t](double v, double dir) -> double {
    const float f = static_cast<float>(v);
    if (t == DType::f32) return std::nextafter(f, static_cast<float>(dir * kInf));
    if (v == 0) return from_16(t, dir > 0 ? 0x0001 : 0x8001);
    const uint16_t bits = to_16(t, f);
    const bool away = (v > 0) == (dir > 0);  // away from zero: the magnitude grows
    return from_16(t, static_cast<uint16_t>(away ? bits + 1 : bits - 1));
  };
  const double next = step(v, dir);
  return std::isinf(next) ? v + (v - step(v, -dir)) : next;
}

// The element rule (range_element, tally.h) written out with those
// neighbours: |c - m| over the reach from m plus half the gap beyond the end
// on c's side, m the exact value clamped to the range. Ends drawn where the
// gap is not v's own spacing: zeros, powers of two (toward zero the next
// value is a binade lower), the smallest normal and subnormals, and the
// largest finite value.
TEST(Tally, TheRatioIsTheElementRule) {
  std::mt19937_64 rng(test::fixed_seed(20261207));
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const FloatFormat f = float_format(t);
    const double ends[] = {0.0, -0.0, 1, -1, 0.5, -0.5, 0.75, -3, f.smallest_normal(), -f.smallest_normal(),
                           f.subnormal_spacing(), -f.subnormal_spacing(), 3 * f.subnormal_spacing(),
                           f.largest_finite(), -f.largest_finite(), 1.5 * f.smallest_normal()};
    std::vector<double> values(std::begin(ends), std::end(ends));
    for (int k = 0; k < 64; ++k)  // and values of the format around them
      values.push_back(round_to_format(t, std::ldexp(pick(rng) / double(1 << 20) - 0.5, pick(rng) % 8 - 4)));
    for (double a : values)
      for (double b : values) {
        if (!(a <= b)) continue;
        const double lo = a, hi = b;
        const double exact = lo + (hi - lo) * (pick(rng) / double(1 << 20)) + (pick(rng) % 3 - 1) * (hi - lo + 1);
        for (double c : {lo, hi, neighbour(t, lo, -1), neighbour(t, hi, 1), round_to_format(t, exact)}) {
          if (!(std::fabs(c) <= f.largest_finite()) || !std::isfinite(exact)) continue;  // a value of t
          const double m = std::clamp(exact, lo, hi);
          const double allowed = c >= m ? (hi - m) + (neighbour(t, hi, 1) - hi) / 2
                                        : (m - lo) + (lo - neighbour(t, lo, -1)) / 2;
          const double ratio = c == m ? 0 : std::fabs(c - m) / allowed;
          Evaluation ev;
          Tally tally(ev, NonFinite::row_nan_or_ieee);
          tally.range_element("y", 0, 0, static_cast<float>(c), lo, hi, exact, t, std::nullopt);
          ASSERT_EQ(ev.max_error_over_bound, ratio) << to_string(t) << " [" << lo << ", " << hi << "] " << c << " exact " << exact;
          ASSERT_EQ(ev.worst.allowed, allowed) << to_string(t) << " [" << lo << ", " << hi << "] " << c;
        }
      }
  }
}

// The first element recorded becomes the worst even at ratio 0, as with
// range_element: a row of exact values leaves its first element.
TEST(Tally, AnExactRowLeavesItsFirstElement) {
  Evaluation ev;
  Tally tally(ev, NonFinite::row_nan_or_ieee);
  const std::vector<float> computed{1.0f, 2.0f};
  const std::vector<double> exact{1, 2};
  tally.range_row("y", 3, computed, exact.data(), exact.data(), exact.data(), DType::f32, nullptr);
  EXPECT_EQ(ev.worst.output, "y");
  EXPECT_EQ(ev.worst.row, 3);
  EXPECT_EQ(ev.worst.col, 0);
  EXPECT_EQ(ev.max_error_over_bound, 0);
}

}  // namespace
}  // namespace normcheck::evaluation
