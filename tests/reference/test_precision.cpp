// The reference's outputs do not depend on its starting working precision:
// NormRow and the public API started at 64, 256 and 1024 bits give
// bit-identical floats and doubles for every output (mean, r, xhat, y, dx,
// dgamma, dbeta, and the double statistics), on the test rows and on rows
// next to rounding midpoints. Each start decides its roundings from its own
// error bounds (the Ziv loop), so a bound that is too small shows up as a
// difference here (and as a wrong rounding in test_correct_rounding.cpp).
//
// How this test fails: an error bound that undercounts lets a low start
// decide a rounding the higher start decides differently. The negative
// controls show that the decider refuses an interval around a midpoint, and
// that the midpoint rows really need more than the starting precision.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "normcheck/reference.h"
#include "reference_mp.h"
#include "test_rows.h"
#include "../support/test_seed.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::raw;
using mp::Real;
using mp::Roundings;

constexpr unsigned kStarts[] = {64, kDefaultPrecisionBits, 1024};

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }
bool same(Roundings a, Roundings b) {
  return std::bit_cast<uint32_t>(a.f) == std::bit_cast<uint32_t>(b.f) && same_bits(a.d, b.d);
}

// First disagreement between two evaluations of the same row.
std::optional<std::string> first_difference(const mp::NormRow& a, const mp::NormRow& b) {
  if (!same(a.mean, b.mean)) return "mean";
  if (!same(a.r, b.r)) return "r";
  if (!same_bits(a.variance, b.variance) || !same_bits(a.eps_share, b.eps_share))
    return "variance or eps_share";
  for (int64_t i = 0; i < b.d(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    if (!same(a.xhat[i], b.xhat[i])) return "xhat" + at;
    if (!same(a.y[i], b.y[i])) return "y" + at;
    if (!same(a.dx[i], b.dx[i])) return "dx" + at;
  }
  return std::nullopt;
}

std::vector<float> random_vector(std::mt19937_64& rng, std::size_t n) {
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n);
  for (auto& f : v) f = normal(rng);
  return v;
}

class ReferencePrecision : public ::testing::TestWithParam<Norm> {};

TEST_P(ReferencePrecision, TheStartingPrecisionChangesNothing) {
  std::mt19937_64 rng(test::test_seed());
  const Norm norm = GetParam();
  std::vector<test::RowWithEps> rows = test::near_midpoint_rows(rng);
  for (const auto& [name, x] : test::test_rows(rng))
    for (float eps : {0.0f, 1e-5f, 1.0f}) rows.push_back({name, x, eps});
  for (const auto& [name, x, eps] : rows) {
    const auto gamma = random_vector(rng, x.size()), beta = random_vector(rng, x.size());
    const auto dy = random_vector(rng, x.size());
    const auto b = norm == Norm::layer ? std::span<const float>(beta) : std::span<const float>();
    std::vector<mp::NormRow> evaluations;
    for (unsigned start : kStarts) {
      evaluations.emplace_back(norm, start);
      evaluations.back().forward(x, gamma, b, eps);
      evaluations.back().backward(dy, gamma);
    }
    for (std::size_t k = 1; k < evaluations.size(); ++k) {
      const auto diff = first_difference(evaluations[0], evaluations[k]);
      EXPECT_FALSE(diff) << name << ", eps " << eps << ", start " << kStarts[k] << ": " << *diff;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, ReferencePrecision, ::testing::Values(Norm::layer, Norm::rms),
                         [](const auto& info) {
                           return info.param == Norm::layer ? "LayerNorm" : "RMSNorm";
                         });

bool same_values(const ExactValues& a, const ExactValues& b) {
  for (std::size_t j = 0; j < a.exact.size(); ++j)
    if (!same(Roundings{a.rounded[j], a.exact[j]}, Roundings{b.rounded[j], b.exact[j]})) return false;
  return true;
}

// The column sums (dgamma, dbeta) through the public API, over rows with
// |mean|/sigma ~ 1e4, the sanitizer CI's subnormal row and its negation
// (d = 20).
TEST(ReferencePrecision, ColumnSumsUnchangedByTheStartingPrecision) {
  std::mt19937_64 rng(test::test_seed());
  const auto midpoint_rows = test::near_midpoint_rows(rng);
  const auto& subnormal = midpoint_rows[1].x;
  const int64_t cols = static_cast<int64_t>(subnormal.size()), rows = 6;
  std::vector<float> x;
  for (int64_t i = 0; i < 4; ++i) {
    const double offset = i % 2 ? 1e4 : 0;
    for (float v : random_vector(rng, cols)) x.push_back(static_cast<float>(v + offset));
  }
  x.insert(x.end(), subnormal.begin(), subnormal.end());
  for (float v : subnormal) x.push_back(-v);
  const auto dy = random_vector(rng, rows * cols);
  const auto gamma = random_vector(rng, cols);
  for (float eps : {1e-5f, 1.0f}) {
    const auto a = reference_layernorm_bwd(dy, x, gamma, rows, cols, eps, kStarts[0]);
    const auto ra = reference_rmsnorm_bwd(dy, x, gamma, rows, cols, eps, kStarts[0]);
    for (unsigned start : kStarts) {
      const auto b = reference_layernorm_bwd(dy, x, gamma, rows, cols, eps, start);
      const auto rb = reference_rmsnorm_bwd(dy, x, gamma, rows, cols, eps, start);
      EXPECT_TRUE(same_values(a.dgamma, b.dgamma)) << "LayerNorm dgamma, eps " << eps << ", start " << start;
      EXPECT_TRUE(same_values(a.dbeta, b.dbeta)) << "LayerNorm dbeta, eps " << eps << ", start " << start;
      EXPECT_TRUE(same_values(ra.dgamma, rb.dgamma)) << "RMSNorm dgamma, eps " << eps << ", start " << start;
    }
  }
}

// Negative control: the decider refuses an approximation whose error
// interval holds the midpoint 3 2^-150 (between 2^-149 and 2^-148), decides
// it once the interval excludes it, and rounds the exact tie to even.
TEST(ReferencePrecisionNegative, DeciderRefusesAStraddledMidpoint) {
  mp::RoundingDecider decider;
  Roundings out;
  Real v = mp::make_real(512);
  mpfr_set_d(raw(v), 3 * 0x1p-150, MPFR_RNDN);
  EXPECT_FALSE(decider.decide(v, {false, -400}, out));
  ASSERT_TRUE(decider.decide(v, {}, out));  // exact: the tie, to even
  EXPECT_EQ(out.f, 0x1p-148f);
  mpfr_sub_d(raw(v), raw(v), 0x1p-420, MPFR_RNDN);  // just below the tie
  EXPECT_FALSE(decider.decide(v, {false, -400}, out));
  ASSERT_TRUE(decider.decide(v, {false, -440}, out));
  EXPECT_EQ(out.f, 0x1p-149f);
  EXPECT_EQ(out.d, 3 * 0x1p-150);  // the double holds 3 2^-150 - 2^-420 as the midpoint's neighbour
}

// The midpoint rows need the loop: their first attempt at 256 bits cannot
// decide, which is how the old fixed-precision reference went wrong on the
// sanitizer CI's row.
TEST(ReferencePrecisionNegative, MidpointRowsNeedMoreThanTheStartingPrecision) {
  std::mt19937_64 rng(0);
  const auto rows = test::near_midpoint_rows(rng);
  for (std::size_t k : {0, 1}) {
    for (unsigned start : {kDefaultPrecisionBits}) {  // one start; a list keeps the message
      mp::NormRow row(Norm::layer, start);
      row.forward(rows[k].x, {}, {}, rows[k].eps, false);
      EXPECT_GT(row.bits_used, start) << rows[k].name;
    }
  }
}

}  // namespace
}  // namespace normcheck
