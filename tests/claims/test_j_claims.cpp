// J1-J8 through the claim table: each runs and returns a verdict with a figure
// and series; the decision rules catch known-bad inputs (negative controls).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

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
