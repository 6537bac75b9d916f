// A RapidCheck property over normcheck's adversarial generators: the kernel
// within normcheck's default bound on every generated problem (rows with large
// |mean|/sigma, constant and near-constant rows, outliers, subnormals, specials,
// misaligned arrays), inside the input range such a kernel is held to.
#include <normcheck/gtest.h>
#include <normcheck/rc/generators.h>

#include <cstdlib>
#include <iostream>

#include "my_norms.h"

#ifdef MY_NORMS_BROKEN
#define my_layernorm_fwd my_layernorm_fwd_onepass
#endif

namespace {

TEST(MyNormsProperty, WithinBoundOnAdversarialRows) {
  normcheck::props::GenOptions options;
  options.op = normcheck::Op::layernorm_fwd;
  options.range = normcheck::find_kernel("layernorm_fwd.twopass")->range;  // the range the bound covers
  options.max_d = 4096;
  // RapidCheck's seed: RC_PARAMS="seed=N" reproduces a run (it prints the seed).
  const bool ok = rc::check("my_layernorm_fwd within normcheck's bound", [&] {
    const normcheck::Problem problem = *normcheck::props::gen_problem(options);
    const auto verdict = normcheck::testing::NormWithinBound("my_layernorm_fwd", "problem", my_layernorm_fwd, problem);
    if (!verdict) RC_FAIL(verdict.message());  // names the element, saves the problem, says how to replay it
  });
  EXPECT_TRUE(ok);
}

}  // namespace
