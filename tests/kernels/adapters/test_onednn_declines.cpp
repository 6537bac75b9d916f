// oneDNN's backward takes the forward's variance, which the adapter forms as
// 1/rstd^2: on a row with sigma > 2^64 (|x| ~ 1e30, examples/basic.txt line 8)
// that overflows float, so the row is declined with that reason instead of
// reported as oneDNN's failure. libtorch's backward on the same row runs and
// fails its bound (rstd^3 underflows in its formula): a finding about
// libtorch, which evaluate() must keep reporting.
#include <cfloat>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

// examples/basic.txt line 8, with a fixed dy.
Problem huge_row() {
  Problem p;
  p.rows = 1;
  p.cols = 4;
  p.x = {3e30f, -1e30f, 2e30f, -4e30f};
  p.dy = {0.5f, -1.25f, 0.75f, 1.0f};
  return p;
}

#if NORMCHECK_WITH_ONEDNN
TEST(OnednnDeclines, AVarianceFloatCannotHoldIsDeclinedWithTheReason) {
  const Kernel* k = find_kernel("layernorm_bwd.onednn");
  ASSERT_NE(k, nullptr);
  ASSERT_NE(k->declines_saved_statistic, nullptr);
  const Evaluation e = evaluate(*k, huge_row());
  EXPECT_NE(e.declined.find("oneDNN takes the variance"), std::string::npos) << e.declined;
  EXPECT_NE(e.declined.find("rstd = "), std::string::npos) << "names the statistic: " << e.declined;
}

TEST(OnednnDeclines, TheLimitIsWhereTheVarianceLeavesFloatsNormalRange) {
  const Kernel* k = find_kernel("layernorm_bwd.onednn");
  ASSERT_NE(k, nullptr);
  // 1/rstd^2 is a normal float for rstd in [2^-63.5, 2^63): accepted.
  for (const float rstd : {0x1p-63f, 1e-10f, 1.0f, 1e10f, 0x1p62f})
    EXPECT_EQ(k->declines_saved_statistic(rstd), "") << rstd;
  // 1/rstd^2 >= 2^128 (overflow) or < 2^-126 (subnormal): declined.
  for (const float rstd : {0x1p-64f, 1e-30f, FLT_MIN, 0x1p64f, 1e30f})
    EXPECT_NE(k->declines_saved_statistic(rstd), "") << rstd;
}

TEST(OnednnDeclines, AnOrdinaryRowStillRunsAndPasses) {
  const Kernel* k = find_kernel("layernorm_bwd.onednn");
  ASSERT_NE(k, nullptr);
  Problem p = huge_row();
  p.x = {3.0f, -1.0f, 2.0f, -4.0f};
  const Evaluation e = evaluate(*k, p);
  EXPECT_EQ(e.declined, "");
  EXPECT_TRUE(e.pass) << e.max_error_over_bound;
}
#endif

#if NORMCHECK_WITH_TORCH
TEST(OnednnDeclines, LibtorchOnTheSameRowIsAFindingNotADecline) {
  const Kernel* k = find_kernel("layernorm_bwd.torch");
  ASSERT_NE(k, nullptr);
  const Evaluation e = evaluate(*k, huge_row());
  EXPECT_EQ(e.declined, "");
  EXPECT_FALSE(e.pass) << "libtorch's rstd^3 underflows on this row; max error/bound " << e.max_error_over_bound;
}
#endif

}  // namespace
}  // namespace normcheck
