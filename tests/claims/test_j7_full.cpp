// The full J6 and J7 sweeps (J6: d = 16..256, N up to 64, n = 1, 4, 16; J7:
// N = 1 .. 1000 layers, 10 seeds per encoder stack): nightly only.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "normcheck/claims.h"
#include "../support/test_seed.h"

TEST(JClaimsNightly, J7FullSweep) {
  normcheck::ClaimOptions options;
  options.full = true;
  options.seed = normcheck::test::fixed_seed(options.seed);
  for (const normcheck::Claim& claim : normcheck::claim_table()) {
    if (claim.id != "J7") continue;
    const normcheck::ClaimResult r = claim.check(options);
    std::printf("figure: %s\n%s\n", r.figure.c_str(), r.explanation.c_str());
    EXPECT_EQ(r.verdict, normcheck::Verdict::holds_approximately) << r.explanation;
    EXPECT_EQ(r.series.front().x.back(), 1000);
    return;
  }
  FAIL() << "J7 is not in the claim table";
}

TEST(JClaimsNightly, J6FullGrid) {
  normcheck::ClaimOptions options;
  options.full = true;
  options.seed = normcheck::test::fixed_seed(options.seed);
  for (const normcheck::Claim& claim : normcheck::claim_table()) {
    if (claim.id != "J6") continue;
    const normcheck::ClaimResult r = claim.check(options);
    std::printf("figure: %s\n", r.figure.c_str());
    // The per-coordinate ratio within a factor 2 of 1 over the whole grid (J6's rule).
    EXPECT_EQ(r.verdict, normcheck::Verdict::holds_approximately) << r.explanation;
    return;
  }
  FAIL() << "J6 is not in the claim table";
}
