// F1-F4 through the claim table: each runs and returns a verdict with figures
// and series; the 100-digit comparisons catch the known-bad folds (negative
// controls): gamma on the wrong side, RMSNorm of an uncentred row, a Post-LN fold.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "exact_tensor.h"
#include "fold_exact.h"
#include "normcheck/claims.h"
#include "run_claim.h"

namespace {

using normcheck::test::claim_options_from_env;

normcheck::ClaimResult run(std::string_view id) { return normcheck::test::run_claim(id, claim_options_from_env()); }

void expect_holds(const normcheck::ClaimResult& r) {
  EXPECT_EQ(r.verdict, normcheck::Verdict::holds) << r.figure;
  EXPECT_FALSE(r.figure.empty());
  EXPECT_FALSE(r.explanation.empty());
  EXPECT_FALSE(r.series.empty());
  for (const auto& s : r.series) EXPECT_EQ(s.x.size(), s.y.size()) << s.name;
  std::printf("figure: %s\n", r.figure.c_str());
}

namespace cf = normcheck::claims_fold;
namespace nf = normcheck::fold;
constexpr double kTol = normcheck::claims::kExactTolerance;

}  // namespace

TEST(FClaims, F1) { expect_holds(run("F1")); }
TEST(FClaims, F2) { expect_holds(run("F2")); }
TEST(FClaims, F3) { expect_holds(run("F3")); }
TEST(FClaims, F4) { expect_holds(run("F4")); }

// The exact fold agrees below 1e-60 and the wrong side, diag(gamma) W, is
// caught by the same comparison (it differs at order 1, not 1e-60).
TEST(FClaims, WrongSideFoldIsCaughtExactlyAndInFloat) {
  const auto seed = claim_options_from_env().seed;
  for (nf::NormKind n : {nf::NormKind::layer, nf::NormKind::rms}) {
    EXPECT_LT(cf::exact_fold_mismatch(n, 12, 3, 20, false, seed), kTol);
    EXPECT_GT(cf::exact_fold_mismatch(n, 12, 3, 1, true, seed), 1e-3);
    EXPECT_GT(cf::wrong_side_float(n, seed), 1.0);
  }
}

// RMSNorm of the centred row is LN; of the uncentred row it is not. The eps
// handling of the unit-norm form: d eps is exact, eps unscaled is off by the
// first-order prediction (d - 1) eps / (2 d sigma^2) when eps << sigma^2.
TEST(FClaims, CentringAndEpsHandling) {
  const auto c = cf::exact_centring(16, 4, 1.0, 1e-5, claim_options_from_env().seed);
  EXPECT_LT(c.ln_vs_rms_of_centred, kTol);
  EXPECT_LT(c.stream, kTol);
  EXPECT_LT(c.unit_norm_d_eps, kTol);
  EXPECT_GT(c.uncentred_control, 0.1);
  // sigma^2 ~ 1 >> eps: the second-order term is ~(eps/sigma^2)^2 ~ 1e-10 relative to 1e-5.
  EXPECT_NEAR(c.unit_norm_same_eps / c.predicted_same_eps, 1.0, 0.05);
}

// Post-LN: the fold changes the model at order 1; Pre-LN: it does not.
TEST(FClaims, PostLnFoldChangesTheModel) {
  const auto p = cf::exact_post_ln(8, claim_options_from_env().seed);
  EXPECT_LT(p.pre_ln_fold, kTol);
  EXPECT_GT(p.post_ln_fold, 1e-2);
  // The 3-element counterexample: LN2(gamma xhat) = (1.336, -0.267, -1.069)
  // (by hand: gamma xhat = (sqrt(6), 0, -sqrt(1.5)), mean sqrt(6)/6, ...)
  // against xhat = (sqrt(1.5), 0, -sqrt(1.5)).
  ASSERT_EQ(p.model.size(), 3u);
  EXPECT_NEAR(p.folded[0], std::sqrt(1.5), 1e-15);
  EXPECT_NEAR(p.folded[1], 0.0, 1e-15);
  EXPECT_GT(std::fabs(p.model[1] - p.folded[1]), 0.2);
}
