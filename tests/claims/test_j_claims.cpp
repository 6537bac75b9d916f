// J1-J8 through the claim table: each runs and returns a verdict with a figure
// and series; the decision rules catch known-bad inputs (negative controls).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "j_controls.h"
#include "jacobian_norm.h"
#include "model_update.h"
#include "normcheck/claims.h"

namespace {

normcheck::ClaimOptions options_from_env() {
  normcheck::ClaimOptions options;
  if (const char* env = std::getenv("NORMCHECK_SEED")) options.seed = std::strtoull(env, nullptr, 10);
  std::printf("NORMCHECK_SEED=%llu\n", static_cast<unsigned long long>(options.seed));
  return options;
}

normcheck::ClaimResult run(std::string_view id, const normcheck::ClaimOptions& options) {
  for (const normcheck::Claim& claim : normcheck::claim_table())
    if (claim.id == id) return claim.check(options);
  ADD_FAILURE() << id << " is not in the claim table";
  return {};
}

void expect_decided(const normcheck::ClaimResult& r) {
  EXPECT_NE(r.verdict, normcheck::Verdict::unchecked);
  EXPECT_FALSE(r.figure.empty());
  EXPECT_FALSE(r.explanation.empty());
  EXPECT_FALSE(r.series.empty());
  for (const auto& s : r.series) EXPECT_EQ(s.x.size(), s.y.size()) << s.name;
  std::printf("figure: %s\n", r.figure.c_str());
}

}  // namespace

namespace nj = normcheck::claims_jacobian;

TEST(JClaims, J1) { expect_decided(run("J1", options_from_env())); }
TEST(JClaims, J2) { expect_decided(run("J2", options_from_env())); }
TEST(JClaims, J3) { expect_decided(run("J3", options_from_env())); }
TEST(JClaims, J4) { expect_decided(run("J4", options_from_env())); }
TEST(JClaims, J5) { expect_decided(run("J5", options_from_env())); }
TEST(JClaims, J6) { expect_decided(run("J6", options_from_env())); }
TEST(JClaims, J8) { expect_decided(run("J8", options_from_env())); }

// J1's exact comparison is at 100 digits: the true LN agrees with
// 1/sqrt(sigma^2 + eps) far below 1e-50 (differencing error ~1e-60), and the
// LN with seed 001's eps term, (z - mean)/(std + eps), is caught (its norm
// differs by ~eps/(2 sigma) relative at eps = 1e-5, i.e. ~1e-5, far above 1e-50).
TEST(JClaims, J1CatchesWrongEpsTerm) {
  const auto seed = options_from_env().seed;
  EXPECT_LT(nj::max_relative_mismatch(nj::LayerNormForm::definition, seed, 16), 1e-50);
  EXPECT_GT(nj::max_relative_mismatch(nj::LayerNormForm::std_plus_eps, seed, 16), 1e-50);
}

// J2's bound is exact for variance-1 rows (a few ulps); rows of variance 2
// break the lemma's hypothesis and the search finds ratio sqrt(2).
TEST(JClaims, J2CatchesViolatedHypothesis) {
  const auto seed = options_from_env().seed;
  EXPECT_LE(nj::max_softmax_ratio(16, 64, 1.0, seed), 1 + 1e-14);
  EXPECT_GT(nj::max_softmax_ratio(16, 64, 2.0, seed), 1.4);
}

// The Monte Carlo decision (4 standard errors) accepts the derived expectation
// and rejects a plausible wrong one: J3 without the 2 in W's variance
// (alpha^2 + v^2 w^2 / 2), J4 with the LN Jacobian's 1/sqrt(alpha^2) (residual only),
// J8 with the seed's 1/n_in variance on a non-square W.
TEST(JClaims, MonteCarloRejectsWrongPredictions) {
  const auto seed = options_from_env().seed;
  const auto j3 = nj::ffn_second_moment(1, 1, 1, 64, 256, 200, seed);
  EXPECT_TRUE(normcheck::claims_mc::consistent(j3, 2.0));
  EXPECT_FALSE(normcheck::claims_mc::consistent(j3, 1.5));
  const auto j4 = nj::ffn_input_gain_squared(1, 1, 1, 64, 256, 200, seed);
  EXPECT_TRUE(normcheck::claims_mc::consistent(j4, 2.0));
  EXPECT_FALSE(normcheck::claims_mc::consistent(j4, 1.0));
  const auto j8 = nj::xavier_gain_squared(64, 256, 1, false, 300, seed);
  EXPECT_TRUE(normcheck::claims_mc::consistent(j8, 2.0 * 256 / 320));
  EXPECT_FALSE(normcheck::claims_mc::consistent(j8, 256.0 / 64));
}

// J5: the seed's own scalar model reproduces its prediction exactly (positive
// control: the comparison would accept a true decay law), the real FFN stack
// does not decay (Post-LN, K = 8: prediction 0).
TEST(JClaims, J5ScalarModelMatchesItsPrediction) {
  for (int k : {2, 8, 32})
    EXPECT_NEAR(nj::scalar_model_product_gain(1.5, 0.7, 0.6, k),
                nj::predicted_product_gain(1.5, 0.7, 0.6, k), 1e-14);
  EXPECT_EQ(nj::predicted_product_gain(1, 1, 1, 8), 0.0);
  EXPECT_GT(nj::ffn_product_gain(1, 1, 1, 8, 64, 256, 4, options_from_env().seed), 0.5);
}

// J6's per-sublayer bound ratio on hand-made sequences: gain 0.5, changes
// 1, 1.5, 2 with parameter changes 2, 1, 1 meet the bound exactly (ratio 1);
// a jump to 3 violates it (3 / (1 + 0.5) = 2).
TEST(JClaims, J6BoundRatioOnKnownSequences) {
  EXPECT_DOUBLE_EQ(nj::worst_sublayer_bound_ratio({1, 1.5, 2}, {2, 1, 1}, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(nj::worst_sublayer_bound_ratio({1, 3}, {2, 1}, 0.5), 2.0);
}

TEST(JClaims, J7DefaultSweep) {
  const auto r = run("J7", options_from_env());
  expect_decided(r);
  EXPECT_EQ(r.verdict, normcheck::Verdict::holds_approximately) << r.explanation;
}

// Negative control of J7's rule: a series that grows 10x is not "O(eta)".
TEST(JClaims, J7RuleRejectsGrowingUpdate) {
  EXPECT_TRUE(normcheck::claims_deepnorm::stays_bounded({40, 38, 41, 36}, 2));
  EXPECT_FALSE(normcheck::claims_deepnorm::stays_bounded({138, 2900, 28000, 12000}, 2));
  EXPECT_FALSE(normcheck::claims_deepnorm::stays_bounded({}, 2));
}
