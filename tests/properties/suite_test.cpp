// The property suite: every property of property_table() against every
// kernel of kernel_table() it applies to, one test per pair, so a kernel
// added to the table is covered with no new test code. Control kernels are
// skipped here (they are meant to fail; negative_controls_test shows the
// properties catch them). A third-party kernel that breaks a property is a
// finding for the report, printed and recorded, not a test failure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "property_table.h"
#include "runner.h"

namespace normcheck::props {
namespace {

struct SuiteCase {
  const Kernel* kernel;
  const PropertyDef* property;
};

// gtest prints the parameter in failure lines.
void PrintTo(const SuiteCase& c, std::ostream* os) { *os << c.kernel->name << " / " << c.property->name; }

std::vector<SuiteCase> suite_cases() {
  std::vector<SuiteCase> cases;
  for (const Kernel& kernel : kernel_table())
    for (const PropertyDef& property : property_table())
      if (property.applies(kernel)) cases.push_back({&kernel, &property});
  return cases;
}

std::string case_name(const testing::TestParamInfo<SuiteCase>& info) {
  std::string name = std::string(info.param.kernel->name) + "__" + std::string(info.param.property->name);
  for (char& c : name)
    if (c == '.') c = '_';
  return name;
}

class PropertySuite : public testing::TestWithParam<SuiteCase> {};

TEST_P(PropertySuite, Holds) {
  const Kernel& kernel = *GetParam().kernel;
  const PropertyDef& property = *GetParam().property;
  if (kernel.origin == Origin::control)
    GTEST_SKIP() << kernel.name << " is a control; negative_controls_test checks that it is caught";
  const Outcome outcome = check_property(
      std::string(kernel.name) + "/" + std::string(property.name), gen_problem(property.options(kernel)),
      [&](const Problem& p) { property.body(kernel, p); }, default_run_params());
  const std::string text = describe_outcome(kernel, property.name, outcome);
  if (kernel.origin == Origin::third_party && (outcome.failed || outcome.gave_up)) {
    RecordProperty("finding", std::string(property.name) + " broken by third-party kernel " +
                                  std::string(kernel.name));
    std::cout << "[normcheck] FINDING (third-party, recorded, not a failure): " << kernel.name << " breaks "
              << property.name << '\n';
    return;
  }
  EXPECT_FALSE(outcome.failed) << text;
  EXPECT_FALSE(outcome.gave_up) << "too many discarded cases: the generator does not fit this kernel\n"
                                << text;
}

INSTANTIATE_TEST_SUITE_P(Kernels, PropertySuite, testing::ValuesIn(suite_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PropertySuite);

}  // namespace
}  // namespace normcheck::props
