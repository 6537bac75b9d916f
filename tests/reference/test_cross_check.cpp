// The reference's exact numerators against an independent rational
// computation from the definitions (rational_oracle.h): with k = d
// (LayerNorm) or 1 (RMSNorm), mu = S/d and var the biased variance,
//   S = sum x,  D_i = k (x_i - mu) (RMSNorm: x_i),  N = k^2 d (var + eps),
//   G = sum g_i D_i,  M_i = k N a_i where dx_i = a_i sqrt(1/(var + eps))
// (a_i from ExactRow::dx), all as exact equalities. These identities are
// what makes the reference's outputs a few correctly rounded operations on
// exact operands (docs/semantics.md).
//
// How this test fails: a numerator that rounded (too little precision for a
// sum), a variance divided by d - 1, a wrong sign or a missing mean(g) term
// in the gradient: the rationals differ. The negative control feeds the
// comparator a d - 1 variance and requires it to object.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "normcheck/reference.h"
#include "rational_oracle.h"
#include "reference_mp.h"
#include "test_rows.h"
#include "../support/test_seed.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::raw;
using mp::Real;
using test::exact;
using test::ExactRow;
using test::Rational;

Rational rational(const Real& v) {
  Rational q;
  mpfr_get_q(q.backend().data(), raw(v));  // an MPFR number is a dyadic rational: exact
  return q;
}

// The numerators that differ from the definitions' values ("" when none).
// `variance_divisor` is d for the definition; the negative control passes d - 1.
std::string numerator_mismatches(const mp::NormRow& row, std::span<const float> x, float eps,
                                 std::span<const float> gamma, std::span<const float> dy,
                                 long variance_divisor) {
  const bool layer = row.norm() == Norm::layer;
  const long d = static_cast<long>(x.size());
  const Rational k = layer ? d : 1;
  Rational sum = 0;
  for (float v : x) sum += exact(v);
  const Rational mu = sum / d;
  Rational var = 0;
  for (float v : x) var += layer ? Rational((exact(v) - mu) * (exact(v) - mu)) : Rational(exact(v) * exact(v));
  var /= variance_divisor;
  std::string bad;
  if (rational(row.sum_x) != sum) bad += " S";
  const Rational n = k * k * d * (var + exact(eps));
  if (rational(row.norm_sq) != n) bad += " N";
  std::vector<Rational> g;
  Rational sum_g_dev = 0;
  for (long i = 0; i < d; ++i) {
    const Rational dev = layer ? Rational(k * (exact(x[i]) - mu)) : exact(x[i]);
    if (rational(row.dev[i]) != dev) bad += " D[" + std::to_string(i) + "]";
    g.push_back(exact(gamma[i]) * exact(dy[i]));
    sum_g_dev += g.back() * dev;
  }
  if (rational(row.sum_g_dev) != sum_g_dev) bad += " G";
  if (n == 0) return bad;  // dx is NaN (test_semantics.cpp)
  const auto dx = ExactRow(x, eps, layer).dx(g);
  for (long i = 0; i < d; ++i)
    if (rational(row.dx_num[i]) != k * n * dx[i].a) bad += " M[" + std::to_string(i) + "]";
  return bad;
}

std::vector<float> random_vector(std::mt19937_64& rng, std::size_t n) {
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> v(n);
  for (auto& f : v) f = normal(rng);
  return v;
}

class ReferenceCrossCheck : public ::testing::TestWithParam<Norm> {};

TEST_P(ReferenceCrossCheck, NumeratorsAreExact) {
  std::mt19937_64 rng(test::test_seed());
  std::vector<test::RowWithEps> rows = test::near_midpoint_rows(rng);
  for (const auto& [name, x] : test::test_rows(rng))
    for (float eps : {0.0f, 1e-5f, 0x1p-149f, 1.0f}) rows.push_back({name, x, eps});
  mp::NormRow row(GetParam(), kDefaultPrecisionBits);
  for (const auto& [name, x, eps] : rows) {
    const auto gamma = random_vector(rng, x.size()), dy = random_vector(rng, x.size());
    row.forward(x, {}, {}, eps, false);
    row.backward(dy, gamma);
    const std::string bad =
        numerator_mismatches(row, x, eps, gamma, dy, static_cast<long>(x.size()));
    EXPECT_TRUE(bad.empty()) << name << ", eps " << eps << ":" << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, ReferenceCrossCheck, ::testing::Values(Norm::layer, Norm::rms),
                         [](const auto& info) {
                           return info.param == Norm::layer ? "LayerNorm" : "RMSNorm";
                         });

// The comparator with a d - 1 variance objects to N on every row with spread.
TEST(ReferenceCrossCheckNegative, CatchesUnbiasedVariance) {
  std::mt19937_64 rng(test::test_seed());
  int rows_with_spread = 0;
  mp::NormRow row(Norm::layer, kDefaultPrecisionBits);
  for (const auto& [name, x] : test::test_rows(rng)) {
    const auto gamma = random_vector(rng, x.size()), dy = random_vector(rng, x.size());
    row.forward(x, {}, {}, 1e-5f, false);
    row.backward(dy, gamma);
    if (x.size() < 2 || row.variance == 0) continue;  // d - 1 and d agree on 0
    ++rows_with_spread;
    const std::string bad =
        numerator_mismatches(row, x, 1e-5f, gamma, dy, static_cast<long>(x.size()) - 1);
    EXPECT_NE(bad.find(" N"), std::string::npos) << name << ": a d - 1 variance went unnoticed";
  }
  EXPECT_GT(rows_with_spread, 10);
}

}  // namespace
}  // namespace normcheck
