// The accuracy baseline (reports/baseline.h): the file round-trips, a malformed
// one is refused with its line, and the check catches a kernel made worse on
// purpose: a broken kernel (tests/broken_kernels) run under the name of the
// kernel whose baseline was recorded.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "accuracy.h"
#include "baseline.h"
#include "broken_kernels.h"
#include "normcheck/kernel.h"
#include "test_seed.h"

namespace normcheck::report {
namespace {

// NORMCHECK_SEED when set, printed either way: the rows are random.
uint64_t test_seed() {
  return test::fixed_seed(20261121);
}

ReportData run(const Kernel& kernel, uint64_t seed) {
  ReportData data;
  data.quick = true;
  data.seed = seed;
  data.simd_target = "test";
  data.accuracy_options = {{17, 64, 256}, 6, seed, {}, 64};
  data.accuracy = run_accuracy({&kernel}, data.accuracy_options, nullptr);
  return data;
}

TEST(Baseline, FormatsAndParsesBack) {
  Baseline b{true, 42, "AVX2", {{"k.a", "layernorm_fwd", "y", 0.1234567890123456789, 3e9},
                                {"k.a", "layernorm_fwd", "rstd", INFINITY, 0}}};
  const Baseline back = parse_baseline(format_baseline(b), "file");
  EXPECT_EQ(back.quick, true);
  EXPECT_EQ(back.seed, 42u);
  EXPECT_EQ(back.simd_target, "AVX2");
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[0].max_error_over_bound, b.entries[0].max_error_over_bound) << "17 digits round-trip";
  EXPECT_EQ(back.entries[0].max_ulp, 3e9);
  EXPECT_TRUE(std::isinf(back.entries[1].max_error_over_bound));
}

TEST(Baseline, RefusesAMalformedFileNamingTheLine) {
  const std::string head = "# workload quick seed 1 simd_target AVX2\n";
  for (const std::string& body : {std::string("k op y 0.5\n"), std::string("k op y 0.5 1 extra\n"),
                                  std::string("k op y -1 2\n"), std::string("k op y x 2\n")}) {
    try {
      parse_baseline(head + body, "f.txt");
      ADD_FAILURE() << "accepted: " << body;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("f.txt:2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_baseline("k op y 0.5 1\n", "f.txt"), std::invalid_argument) << "no workload line";
  // the seed by the one seed parser (seed.h): no sign, decimal with leading zeros, or 0x hex
  for (const char* seed : {"-1", "+1", "1x"})
    EXPECT_THROW(parse_baseline(std::string("# workload quick seed ") + seed + " simd_target AVX2\n", "f.txt"),
                 std::invalid_argument)
        << seed;
  EXPECT_EQ(parse_baseline("# workload quick seed 010 simd_target AVX2\n", "f.txt").seed, 10u);
  EXPECT_EQ(parse_baseline("# workload quick seed 0x10 simd_target AVX2\n", "f.txt").seed, 16u);
}

TEST(Baseline, AKernelMatchesItsOwnBaseline) {
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  ASSERT_NE(twopass, nullptr);
  const uint64_t seed = test_seed();
  const ReportData data = run(*twopass, seed);
  const BaselineCheck check = check_baseline(run(*twopass, seed), baseline_of(data));
  EXPECT_TRUE(check.regressions.empty()) << format_check(check, "own");
}

// Negative control: std_plus_eps ((x - mu) / (sigma + eps)) under the
// two-pass kernel's name must show up as a regression of that name, with the
// input it was seen on.
TEST(Baseline, CatchesAKernelMadeWorse) {
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  ASSERT_NE(twopass, nullptr);
  const uint64_t seed = test_seed();
  const Baseline good = baseline_of(run(*twopass, seed));
  Kernel worse = broken::std_plus_eps_kernel();
  worse.name = twopass->name;
  const BaselineCheck check = check_baseline(run(worse, seed), good);
  ASSERT_FALSE(check.regressions.empty()) << "the broken kernel went unnoticed";
  const std::string text = format_check(check, "good");
  EXPECT_NE(text.find("layernorm_fwd.twopass layernorm_fwd y: error/bound"), std::string::npos) << text;
  EXPECT_NE(text.find(" worse) on "), std::string::npos) << text;
}

TEST(Baseline, ATighterBaselineFails) {
  const Kernel* kernel = find_kernel("rmsnorm_fwd.scalar");
  ASSERT_NE(kernel, nullptr);
  const uint64_t seed = test_seed();
  const ReportData data = run(*kernel, seed);
  Baseline tight = baseline_of(data);
  ASSERT_FALSE(tight.entries.empty());
  for (BaselineEntry& e : tight.entries) e.max_error_over_bound *= 0.5;
  const BaselineCheck check = check_baseline(data, tight);
  EXPECT_FALSE(check.regressions.empty());
}

}  // namespace
}  // namespace normcheck::report
