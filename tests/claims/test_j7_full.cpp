// The full J7 sweep (N = 1 .. 1000 layers): nightly only.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "normcheck/claims.h"

TEST(JClaimsNightly, J7FullSweep) {
  normcheck::ClaimOptions options;
  options.full = true;
  if (const char* env = std::getenv("NORMCHECK_SEED")) options.seed = std::strtoull(env, nullptr, 10);
  std::printf("NORMCHECK_SEED=%llu\n", static_cast<unsigned long long>(options.seed));
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
