// The full J6 and J7 sweeps (J6: d = 16..256, N up to 64, n = 1, 4, 16; J7:
// N = 1 .. 1000 layers, 10 seeds per encoder stack): nightly only.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "normcheck/claims.h"
#include "run_claim.h"

TEST(JClaimsNightly, J7FullSweep) {
  const normcheck::ClaimResult r = normcheck::test::run_claim("J7", normcheck::test::claim_options_from_env(true));
  std::printf("figure: %s\n%s\n", r.figure.c_str(), r.explanation.c_str());
  EXPECT_EQ(r.verdict, normcheck::Verdict::holds_approximately) << r.explanation;
  ASSERT_FALSE(r.series.empty());
  EXPECT_EQ(r.series.front().x.back(), 1000);
}

TEST(JClaimsNightly, J6FullGrid) {
  const normcheck::ClaimResult r = normcheck::test::run_claim("J6", normcheck::test::claim_options_from_env(true));
  std::printf("figure: %s\n", r.figure.c_str());
  // The per-coordinate ratio within a factor 2 of 1 over the whole grid (J6's rule).
  EXPECT_EQ(r.verdict, normcheck::Verdict::holds_approximately) << r.explanation;
}
