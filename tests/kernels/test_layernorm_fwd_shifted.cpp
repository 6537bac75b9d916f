// The negative control: on rows x = 1e4 + N(0, 1) (|mu|/sigma ~ 1e4, d = 1024)
// the naive one-pass variance E[x^2] - E[x]^2 cancels catastrophically. The
// control declares the default bound (what any two-pass kernel meets) and
// must fail it, while two-pass and Welford pass theirs; the control must also
// stay within the kappa^2 bound its own algorithm needs, which checks that
// derivation. The printed error/bound ratios are docs/accuracy.md's figures.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "kernel_test_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

Problem shifted_rows() {
  std::mt19937_64 rng(test::fixed_seed(1024));
  return test::shifted_normal_rows(rng, 8, 1024, 1e4f, 1.0f, 1e-5f);
}

const Kernel& kernel(const char* name) {
  const Kernel* k = find_kernel(name);
  if (!k) throw std::runtime_error(std::string("no kernel ") + name);
  return *k;
}

TEST(LayerNormFwdShifted, NaiveOnepassFailsItsDeclaredBound) {
  const Evaluation ev = evaluate(kernel("layernorm_fwd.naive_onepass"), shifted_rows());
  std::cout << test::describe(ev) << "\n";
  EXPECT_FALSE(ev.pass);
  EXPECT_GT(ev.max_error_over_bound, 1.0);
}

TEST(LayerNormFwdShifted, NaiveOnepassStaysWithinItsAlgorithmsBound) {
  const Evaluation ev = evaluate(kernel("layernorm_fwd.naive_onepass"), shifted_rows(),
                                 &naive_onepass_layernorm_fwd_bound);
  std::cout << test::describe(ev) << "\n";
  EXPECT_TRUE(ev.pass);
}

TEST(LayerNormFwdShifted, TwopassWelfordAndPytorchFormPass) {
  const Problem p = shifted_rows();
  for (const char* name :
       {"layernorm_fwd.twopass", "layernorm_fwd.welford", "layernorm_fwd.pytorch_form"}) {
    const Evaluation ev = evaluate(kernel(name), p);
    std::cout << test::describe(ev) << "\n";
    EXPECT_TRUE(ev.pass) << test::describe(ev);
  }
}

// The default bound is what any correct two-pass kernel meets. Every forward
// kernel of the table (ours and third-party) is printed against its own bound
// and against the default for the record; only two-pass must pass the default.
TEST(LayerNormFwdShifted, TwopassMeetsTheDefaultBound) {
  const Problem p = shifted_rows();
  const Evaluation ev =
      evaluate(kernel("layernorm_fwd.twopass"), p, default_bound(Op::layernorm_fwd));
  std::cout << "against the default bound: " << test::describe(ev) << "\n";
  EXPECT_TRUE(ev.pass);
  std::vector<const Kernel*> all = test::forward_kernels();
  for (const Kernel* k : test::third_party_forward_kernels()) all.push_back(k);
  for (const Kernel* k : all) {
    std::cout << "against its own bound:    " << test::describe(evaluate(*k, p)) << "\n";
    std::cout << "against the default bound: "
              << test::describe(evaluate(*k, p, default_bound(Op::layernorm_fwd))) << "\n";
  }
}

}  // namespace
}  // namespace normcheck
