// Negative controls: the property suite must catch every control kernel of the
// table (naive_onepass) and every deliberately broken kernel of
// tests/broken_kernels within a fixed budget, and shrink the counterexample to
// a small problem. Without this a suite that could not fail would pass.
//
// Budget: kBudget cases per property, properties tried in property_table()
// order until one fails. The seed is fixed (kSeed) so the run is
// reproducible; NORMCHECK_SEED replaces it to check that the catch does not
// hinge on one seed.
//
// Size bound: the shrunk counterexample has one row and at most
// kMaxShrunkCols columns. Each of these kernels fails on a row of d <= 3
// (naive_onepass: [c, c + 1ulp] with |c| large; unbiased variance, std + eps
// and eps outside sqrt: any d = 2 row with sigma^2 ~ eps; mean skipping the
// tail: d = 1 with x != 0; backward without projection: d = 2 with dy not
// constant), and the shrinker removes rows and any chunk of columns whose
// removal keeps the failure, so it ends at a row where no single column can
// go. That need not be the global minimum (removing one column can repair a
// failure that removing two keeps), hence the slack: 8.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broken_kernels.h"
#include "normcheck/seed.h"
#include "property_table.h"
#include "runner.h"

namespace normcheck::props {
namespace {

constexpr int kBudget = 200;
constexpr uint64_t kSeed = 0x6e6f726d636865;  // "normche"
constexpr int64_t kMaxShrunkCols = 8;

std::vector<const Kernel*> controls() {
  std::vector<const Kernel*> out;
  for (const Kernel& kernel : kernel_table())
    if (kernel.origin == Origin::control) out.push_back(&kernel);
  for (const Kernel& kernel : broken::broken_kernels()) out.push_back(&kernel);
  return out;
}

std::string control_name(const testing::TestParamInfo<const Kernel*>& info) {
  std::string name(info.param->name);
  for (char& c : name)
    if (c == '.') c = '_';
  return name;
}

}  // namespace
}  // namespace normcheck::props

namespace normcheck {
// gtest prints the parameter in failure lines.
void PrintTo(const Kernel* kernel, std::ostream* os) { *os << kernel->name; }
}  // namespace normcheck

namespace normcheck::props {
namespace {

class NegativeControl : public testing::TestWithParam<const Kernel*> {};

TEST_P(NegativeControl, CaughtAndShrunk) {
  const Kernel& kernel = *GetParam();
  RunParams params = default_run_params();
  params.seed = seed_from_env().value_or(kSeed);
  params.max_success = kBudget;
  params.shrink = true;

  for (const PropertyDef& property : property_table()) {
    if (!property.applies(kernel)) continue;
    const Outcome outcome = check_property(
        std::string(kernel.name) + "/" + std::string(property.name), gen_problem(property.options(kernel)),
        [&](const Problem& p) { property.body(kernel, p); }, params);
    if (!outcome.failed) continue;
    describe_outcome(kernel, property.name, outcome);
    ASSERT_TRUE(outcome.counterexample.has_value()) << "failure without a recorded counterexample";
    EXPECT_EQ(outcome.counterexample->rows, 1) << "not shrunk to one row";
    EXPECT_LE(outcome.counterexample->cols, kMaxShrunkCols) << "not shrunk to a small row";
    return;
  }
  FAIL() << "no property caught " << kernel.name << " within " << kBudget << " cases per property (seed "
         << params.seed << ")";
}

INSTANTIATE_TEST_SUITE_P(Controls, NegativeControl, testing::ValuesIn(controls()), control_name);

}  // namespace
}  // namespace normcheck::props
