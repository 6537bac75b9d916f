// The reference's statistics against an independent exact computation: the
// mean and the biased variance of the float inputs as exact rationals (GMP),
// compared with the reference's multiprecision values, and r and xhat checked
// against those rationals.
//
// How this test fails: if the reference divided the variance by d - 1 (or by
// anything but d), summed with too little precision, took the mean wrongly or
// normalized with the wrong r, the rational comparison reports the row. The
// negative controls below run the same comparator on a d - 1 reference and on
// a reference whose mean is off by 4x the tolerance, and require it to object.
#include <gtest/gtest.h>

#include <boost/multiprecision/gmp.hpp>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "reference_mp.h"
#include "test_rows.h"
#include "test_seed.h"

namespace normcheck {
namespace {

using Rational = boost::multiprecision::mpq_rational;
using mp::Norm;
using mp::raw;
using mp::Real;

constexpr unsigned kBits = 256;

Rational exact(const Real& v) {
  Rational q;
  mpfr_get_q(q.backend().data(), raw(v));  // an MPFR number is a dyadic rational: exact
  return q;
}

Rational exact(float f) {
  Rational q;
  mpq_set_d(q.backend().data(), f);  // float -> double -> rational: exact
  return q;
}

Rational abs(const Rational& q) { return q < 0 ? Rational(-q) : q; }

// 2^-k as a rational.
Rational pow2_neg(unsigned k) {
  Rational q(1);
  mpq_div_2exp(q.backend().data(), q.backend().data(), k);
  return q;
}

// What a reference claims about one row.
struct Claimed {
  const Real& mean;
  const Real& variance;
  const Real& r;
  std::span<const Real> xhat;
};

// Tolerances, with T = 2^-(p-10) for working precision p and d <= 2^9:
//  mean: p-bit recursive summation of d exact floats and one division err by
//        at most d 2^-p sum|x| / d <= T mean|x| (first order; d <= 512 leaves
//        a factor 2 for the higher orders).
//  variance (LayerNorm): sum (x - c)^2 = sum (x - mu)^2 + d (c - mu)^2 (the
//        cross term vanishes), so the mean's error e <= T mean|x| enters only
//        squared; the d fma roundings, the deviations' roundings and the
//        division add (d + 3) 2^-p relative <= T. Bound: T var + 2 (T mean|x|)^2.
//        RMSNorm: no mean; T mean(x^2).
//  r: r^2 (var + eps) = 1 + 2 rho - delta with |rho| <= 2^-p (rec_sqrt) and
//        delta the relative error of var + eps: <= 3T + 2 (T mean|x|)^2/(var+eps).
//  xhat: xhat/r = (x - c)(1 + d1)(1 + d2): |xhat/r - (x - mu)| <= T mean|x| + T |x - mu|.
// A d - 1 variance is off by var/(d-1) >= var/511, about 2^237 times T var.
std::vector<std::string> cross_check(std::span<const float> x, float eps, Norm norm,
                                     unsigned bits, const Claimed& claimed) {
  const auto d = static_cast<long>(x.size());
  const Rational tol = pow2_neg(bits - 10);
  Rational sum(0), sum_abs(0);
  for (float v : x) {
    sum += exact(v);
    sum_abs += abs(exact(v));
  }
  const Rational mean = sum / d, mean_abs = sum_abs / d;
  Rational variance(0);
  for (float v : x) {
    const Rational dev = norm == Norm::layer ? Rational(exact(v) - mean) : exact(v);
    variance += dev * dev;
  }
  variance /= d;

  std::vector<std::string> mismatches;
  auto report = [&](const std::string& what, const Rational& got, const Rational& want) {
    std::ostringstream s;
    s << what << ": reference " << static_cast<double>(got) << ", exact rational "
      << static_cast<double>(want);
    mismatches.push_back(s.str());
  };
  // NaN or inf where the exact value is finite is a mismatch too.
  auto finite = [](const Real& v) { return mpfr_number_p(raw(v)) != 0; };

  if (!finite(claimed.mean) || abs(exact(claimed.mean) - mean) > tol * mean_abs)
    report("mean", finite(claimed.mean) ? exact(claimed.mean) : Rational(0), mean);

  const Rational var_tol = norm == Norm::layer
                               ? Rational(tol * variance + 2 * (tol * mean_abs) * (tol * mean_abs))
                               : Rational(tol * variance);
  if (!finite(claimed.variance) || abs(exact(claimed.variance) - variance) > var_tol)
    report("variance", finite(claimed.variance) ? exact(claimed.variance) : Rational(0), variance);

  const Rational var_eps = variance + exact(eps);
  if (var_eps == 0) {
    // r = +inf and xhat = 0 * inf = NaN (docs/semantics.md).
    if (!mpfr_inf_p(raw(claimed.r)) || mpfr_sgn(raw(claimed.r)) < 0)
      mismatches.push_back("r: expected +inf for variance + eps = 0");
    for (const Real& v : claimed.xhat)
      if (!mpfr_nan_p(raw(v))) mismatches.push_back("xhat: expected NaN for variance + eps = 0");
    return mismatches;
  }
  const Rational r_tol =
      3 * tol + 2 * (tol * mean_abs) * (tol * mean_abs) / var_eps;
  if (!finite(claimed.r) || abs(exact(claimed.r) * exact(claimed.r) * var_eps - 1) > r_tol)
    report("r^2 (variance + eps)",
           finite(claimed.r) ? Rational(exact(claimed.r) * exact(claimed.r) * var_eps) : Rational(0),
           1);

  if (!finite(claimed.r) || exact(claimed.r) == 0) return mismatches;
  const Rational r = exact(claimed.r);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Rational dev = norm == Norm::layer ? Rational(exact(x[i]) - mean) : exact(x[i]);
    if (!finite(claimed.xhat[i]) ||
        abs(exact(claimed.xhat[i]) / r - dev) > tol * mean_abs + tol * abs(dev))
      report(std::string("xhat[") + std::to_string(i) + "] / r",
             finite(claimed.xhat[i]) ? Rational(exact(claimed.xhat[i]) / r) : Rational(0), dev);
  }
  return mismatches;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& m : v) s += "\n  " + m;
  return s;
}

class ReferenceCrossCheck : public ::testing::TestWithParam<Norm> {};

TEST_P(ReferenceCrossCheck, StatisticsMatchExactRationals) {
  std::mt19937_64 rng(test::test_seed());
  mp::NormRow row(GetParam(), kBits);
  int checked = 0;
  for (const auto& [name, x] : test::test_rows(rng)) {
    for (float eps : {0.0f, 1e-5f, 0x1p-149f, 1.0f}) {
      row.forward(x, {}, {}, eps, /*with_y=*/false);
      const auto mismatches = cross_check(
          x, eps, GetParam(), kBits,
          {row.mean, row.variance, row.r, std::span<const Real>(row.xhat.data(), x.size())});
      EXPECT_TRUE(mismatches.empty()) << name << ", eps " << eps << joined(mismatches);
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

INSTANTIATE_TEST_SUITE_P(Norms, ReferenceCrossCheck, ::testing::Values(Norm::layer, Norm::rms),
                         [](const auto& info) {
                           return info.param == Norm::layer ? "LayerNorm" : "RMSNorm";
                         });

// A LayerNorm reference with the d - 1 (unbiased) variance: the bug the
// cross-check must catch. Same MPFR operations as the real one otherwise.
struct UnbiasedVarianceReference {
  Real mean = mp::make_real(kBits), variance = mp::make_real(kBits), r = mp::make_real(kBits);
  std::vector<Real> xhat;

  UnbiasedVarianceReference(std::span<const float> x, float eps) {
    const long d = static_cast<long>(x.size());
    xhat.assign(x.size(), mp::make_real(kBits));
    mpfr_set_zero(raw(mean), 1);
    for (float v : x) mpfr_add_d(raw(mean), raw(mean), v, MPFR_RNDN);
    mpfr_div_si(raw(mean), raw(mean), d, MPFR_RNDN);
    mpfr_set_zero(raw(variance), 1);
    for (std::size_t i = 0; i < x.size(); ++i) {
      mpfr_d_sub(raw(xhat[i]), x[i], raw(mean), MPFR_RNDN);
      mpfr_fma(raw(variance), raw(xhat[i]), raw(xhat[i]), raw(variance), MPFR_RNDN);
    }
    mpfr_div_si(raw(variance), raw(variance), d - 1, MPFR_RNDN);  // the bug
    Real tmp = mp::make_real(kBits);
    mpfr_add_d(raw(tmp), raw(variance), eps, MPFR_RNDN);
    mpfr_rec_sqrt(raw(r), raw(tmp), MPFR_RNDN);
    for (auto& v : xhat) mpfr_mul(raw(v), raw(v), raw(r), MPFR_RNDN);
  }
};

TEST(ReferenceCrossCheckNegative, CatchesUnbiasedVariance) {
  std::mt19937_64 rng(test::test_seed());
  int caught = 0, rows_with_spread = 0;
  for (const auto& [name, x] : test::test_rows(rng)) {
    mp::NormRow row(Norm::layer, kBits);
    row.forward(x, {}, {}, 1e-5f, false);
    if (x.size() < 2 || mpfr_zero_p(raw(row.variance))) continue;  // d - 1 and d agree on 0
    ++rows_with_spread;
    UnbiasedVarianceReference bad(x, 1e-5f);
    const auto mismatches = cross_check(x, 1e-5f, Norm::layer, kBits,
                                        {bad.mean, bad.variance, bad.r, bad.xhat});
    bool variance_flagged = false;
    for (const auto& m : mismatches) variance_flagged |= m.rfind("variance", 0) == 0;
    EXPECT_TRUE(variance_flagged) << name << ": a d - 1 variance went unnoticed";
    caught += variance_flagged;
  }
  EXPECT_GT(rows_with_spread, 10);
  EXPECT_EQ(caught, rows_with_spread);
}

TEST(ReferenceCrossCheckNegative, CatchesMeanOffByFourTolerances) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  mp::NormRow row(Norm::layer, kBits);
  row.forward(x, {}, {}, 1e-5f, false);
  // mean|x| = 3.5; 4 T mean|x| with T = 2^-(kBits-10) is 14 * 2^-246.
  Real shifted = mp::make_real(kBits);
  mpfr_add_d(raw(shifted), raw(row.mean), 14 * 0x1p-246, MPFR_RNDN);
  const auto mismatches =
      cross_check(x, 1e-5f, Norm::layer, kBits,
                  {shifted, row.variance, row.r, std::span<const Real>(row.xhat.data(), 6)});
  ASSERT_FALSE(mismatches.empty());
  EXPECT_EQ(mismatches.front().rfind("mean", 0), 0u) << joined(mismatches);
}

}  // namespace
}  // namespace normcheck
