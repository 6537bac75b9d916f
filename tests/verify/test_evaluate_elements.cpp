// evaluate()'s per-element verdict (EvaluateOptions::keep_main_elements) and
// a reference computed once by the caller (EvaluateOptions::reference,
// exact_reference()).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "test_seed.h"
#include "kernel_test_rows.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Evaluation keeping(const Kernel& k, const Problem& p, const ExactReference* reference = nullptr) {
  EvaluateOptions options;
  options.keep_main_elements = true;
  options.reference = reference;
  return evaluate(k, p, options);
}

// Our rows of every norm op and dtype (the adapters load their libraries: not
// needed here; a norm followed by a Linear keeps no elements, its z has no one xhat;
// a row with a spec of its own adds a residual, which these problems do not have).
std::vector<const Kernel*> our_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if ((k.origin == Origin::ours || k.origin == Origin::control) && !is_norm_linear(k.op) && !k.spec)
      out.push_back(&k);
  return out;
}

// The kept elements are what was judged. A backward's figure in
// Evaluation::outputs is the largest |computed - exact| / allowed over them.
// A forward output is held to the range its spec admits (spec_policy.h), its
// figure one-sided (Tally::range_element); its kept allowance is the range's
// reach from the exact value on the farther side, so that an element
// evaluate() admitted lies within its allowance of the exact value, and a
// figure within 1 means every element does.
TEST(EvaluateElements, KeptElementsAreWhatEvaluateJudged) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : our_kernels()) {
    const Problem p = test::random_problem(rng, 3, 37, true, 2.0f, 1.0f, 1e-5f);
    const Evaluation e = keeping(*k, p);
    ASSERT_TRUE(e.declined.empty()) << k->name << ": " << e.declined;
    ASSERT_EQ(e.main_elements.size(), p.x.size()) << k->name;
    const bool backward = k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd;
    double worst = 0;
    for (const MainElement& m : e.main_elements) {
      ASSERT_TRUE(std::isfinite(m.allowed) && m.allowed > 0) << k->name;
      worst = std::max(worst, std::fabs(static_cast<double>(m.computed) - m.exact) / m.allowed);
    }
    const std::string main = backward ? "dx" : "y";
    bool found = false;
    for (const OutputError& o : e.outputs)
      if (o.output == main) {
        found = true;
        if (backward) EXPECT_EQ(o.max_error_over_bound, worst) << k->name;
        else EXPECT_EQ(o.max_error_over_bound <= 1, worst <= 1) << k->name << " " << o.max_error_over_bound << " " << worst;
      }
    EXPECT_TRUE(found) << k->name;
    // Without the option nothing is kept.
    EXPECT_TRUE(evaluate(*k, p).main_elements.empty()) << k->name;
  }
}

// A row evaluate() does not check promises nothing (+inf); a row with a
// non-finite input is held to the non-finite rule, not to an allowance (0).
TEST(EvaluateElements, UncheckedRowsAreInfiniteNonFiniteRowsZero) {
  Problem p;
  p.rows = 3;
  p.cols = 4;
  p.eps = 0;
  p.x = {1, 2, 3, 4, 5, 5, 5, 5, 1, NAN, 3, 4};  // row 1 constant with eps = 0: ill-posed
  const Evaluation e = keeping(*find_kernel("layernorm_fwd.twopass"), p);
  ASSERT_EQ(e.main_elements.size(), 12u);
  for (int c = 0; c < 4; ++c) {
    EXPECT_TRUE(std::isfinite(e.main_elements[static_cast<size_t>(c)].allowed));
    EXPECT_EQ(e.main_elements[static_cast<size_t>(4 + c)].allowed, kInf);
    EXPECT_EQ(e.main_elements[static_cast<size_t>(8 + c)].allowed, 0);
  }
}

// A reference computed once gives the same verdict, bit for bit, as the one
// evaluate() computes itself, for every op and dtype.
TEST(EvaluateElements, AGivenReferenceGivesTheSameVerdict) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : our_kernels()) {
    const Problem p = test::random_problem(rng, 2, 19, true, 0.5f, 1.0f, 1e-5f);
    const ExactReference reference = exact_reference(*k, p);
    const Evaluation own = keeping(*k, p), given = keeping(*k, p, &reference);
    EXPECT_EQ(own.output_digest, given.output_digest) << k->name;
    EXPECT_EQ(own.max_error_over_bound, given.max_error_over_bound) << k->name;
    EXPECT_EQ(own.max_ulp, given.max_ulp) << k->name;
    EXPECT_EQ(own.pass, given.pass) << k->name;
    EXPECT_EQ(own.worst.output, given.worst.output) << k->name;
    ASSERT_EQ(own.main_elements.size(), given.main_elements.size()) << k->name;
    for (std::size_t i = 0; i < own.main_elements.size(); ++i) {
      EXPECT_EQ(own.main_elements[i].exact, given.main_elements[i].exact) << k->name << " " << i;
      EXPECT_EQ(own.main_elements[i].allowed, given.main_elements[i].allowed) << k->name << " " << i;
    }
  }
}

// The negative control of the option: a reference of another op, dtype or
// shape is refused rather than used.
TEST(EvaluateElements, AReferenceOfAnotherProblemIsRefused) {
  std::mt19937_64 rng(test::fixed_seed(5));
  const Problem p = test::random_problem(rng, 2, 8, false, 0.0f, 1.0f, 1e-5f);
  Problem longer = p;
  longer.cols = 4;
  longer.rows = 4;
  const Kernel& layernorm = *find_kernel("layernorm_fwd.twopass");
  const ExactReference of_layernorm = exact_reference(layernorm, p);
  EvaluateOptions options;
  options.reference = &of_layernorm;
  EXPECT_THROW(evaluate(*find_kernel("rmsnorm_fwd.scalar"), p, options), std::invalid_argument);
  EXPECT_THROW(evaluate(*find_kernel("layernorm_fwd.hwy_bf16"), p, options), std::invalid_argument);
  EXPECT_THROW(evaluate(layernorm, longer, options), std::invalid_argument);
  EXPECT_NO_THROW(evaluate(layernorm, p, options));
}

}  // namespace
}  // namespace normcheck
