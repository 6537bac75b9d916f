// A1-A3: verdicts computed by the claim code, and negative controls.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "semantics.h"

namespace normcheck::claims {
namespace {

ClaimOptions fast() { return ClaimOptions{}; }

ExactTensor random_bsd(int64_t b, int64_t s, int64_t d) {
  std::mt19937_64 rng(ClaimOptions{}.seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(b * s * d);
  for (double& e : v) e = normal(rng);
  return ExactTensor({b, s, d}, std::span<const double>(v));
}

TEST(A1, HoldsExactly) { EXPECT_EQ(kClaimA1.check(fast()).verdict, Verdict::holds); }

TEST(A1, NegativeControlInstanceNormOverWrongAxesIsRefuted) {
  // "InstanceNorm" over every axis but the batch: a per-sample norm, not per channel.
  const NormOp wrong = [](const ExactTensor& x, int, double eps) { return x.normalized({1, 2, 3}, eps); };
  const ClaimResult r = check_a1(fast(), wrong);
  EXPECT_EQ(r.verdict, Verdict::refuted);
  EXPECT_NE(r.figure.find("counterexample"), std::string::npos) << r.figure;
}

TEST(A2, RefutedForSeqLongerThanOneHoldsForSeqOne) {
  EXPECT_EQ(kClaimA2.check(fast()).verdict, Verdict::refuted);
  // Negative control: with S = 1, LayerNorm([S, D]) is LayerNorm(D).
  EXPECT_EQ(check_a2(fast(), random_bsd(2, 1, 4)).verdict, Verdict::holds);
}

TEST(A3, SeedPrintsComeFromDifferentInputs) {
  const ClaimResult r = kClaimA3.check(fast());
  EXPECT_EQ(r.verdict, Verdict::holds) << r.figure;
  const auto& p = seed002_prints();
  EXPECT_EQ(relate_printed_outputs(p.library, p.manual, p.layernorm_sd, 2, 3, 4).cause, "different input");
}

// Controls for the A3 analysis: printed pairs made from one input with a known cause.
std::vector<double> printed(const ExactTensor& t, double factor = 1) {
  std::vector<double> v = t.to_double();
  for (double& e : v) e = std::round(e * factor * 1e4) / 1e4;
  return v;
}

TEST(A3, NegativeControlsOfTheAnalysis) {
  const ExactTensor x = random_bsd(2, 3, 4);
  const auto manual = printed(layer_norm(x, 1, kTorchEps));
  const auto sd = printed(layer_norm(x, 2, kTorchEps));
  EXPECT_EQ(relate_printed_outputs(manual, manual, sd, 2, 3, 4).cause, "none");
  auto typo = manual;
  typo[5] += 0.1;
  EXPECT_EQ(relate_printed_outputs(typo, manual, sd, 2, 3, 4).cause, "typo");
  // The unbiased variance: outputs smaller by sqrt((d-1)/d).
  const auto unbiased = printed(x.normalized({2}, kTorchEps, {Spread::sqrt_var_plus_eps, 1}));
  EXPECT_EQ(relate_printed_outputs(unbiased, manual, sd, 2, 3, 4).cause, "unbiased variance");
  // A different input entirely.
  const auto other = printed(layer_norm(random_bsd(3, 3, 4), 1, kTorchEps));
  EXPECT_EQ(relate_printed_outputs(std::vector<double>(other.begin() + 12, other.end()), manual, sd, 2, 3, 4).cause,
            "different input");
}

}  // namespace
}  // namespace normcheck::claims
