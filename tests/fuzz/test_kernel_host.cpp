// fuzz/kernel_host.h through its API: a library loads in a kernel host and
// lists its kernels as it gave them; a load that fails says how; a call runs
// there and its outputs come back; a call that crashes throws with its label
// and the next call gets a fresh host; a call that changes the floating-point
// control state is reported to the CallScope, and the host restores it. The
// plugins are tests/fuzz/hostile's (HOSTILE_<NAME> paths from CMake); the
// command-line view of the same cases is test_hostile_plugins.cpp.
#include "kernel_host.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "isolation.h"
#include "normcheck/evaluate.h"
#include "plugin_loader.h"

namespace normcheck::fuzz {
namespace {

std::string load_error(const char* path, int timeout_ms = 10000) {
  try {
    HostedPlugin plugin(path, timeout_ms);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(it loaded)";
}

Problem small_problem() {
  Problem p;
  p.rows = 2;
  p.cols = 5;
  p.x = {1, 2, 3, 4, 5, -1, 0.5f, 0.25f, 8, -3};
  p.gamma = {1, 2, 0.5f, 1, 1};
  p.beta = {0, 1, 0, -1, 0};
  return p;
}

// The row of `kernel` among a loaded library's rows.
Kernel row_named(const std::vector<Kernel>& rows, const std::string& kernel) {
  for (const Kernel& k : rows)
    if (k.name == kernel) return k;
  throw std::logic_error("no row " + kernel);
}

TEST(KernelHost, ListsTheKernelsAsTheLibraryGaveThem) {
  HostedPlugin plugin(HOSTILE_CORRECT, 10000);
  ASSERT_EQ(plugin.listing().size(), 2u);
  EXPECT_EQ(plugin.listing()[0].name, "correct.layernorm_fwd");
  EXPECT_EQ(plugin.listing()[0].op, NC_LAYERNORM_FWD);
  EXPECT_EQ(plugin.listing()[1].name, "correct.rmsnorm_fwd");
  EXPECT_TRUE(plugin.listing()[1].has_fn);
  EXPECT_EQ(plugin.load_fp_change(), "");
}

TEST(KernelHost, ALoadThatFailsSaysHow) {
  EXPECT_NE(load_error(HOSTILE_CTOR_EXIT3).find("exited with status 3 while loading"), std::string::npos);
  EXPECT_NE(load_error(HOSTILE_CTOR_SEGV).find("killed by signal 11"), std::string::npos);
  EXPECT_NE(load_error(HOSTILE_CTOR_HANG, 300).find("did not finish loading within 300 ms"), std::string::npos);
  EXPECT_NE(load_error(HOSTILE_LIST_CHANGES_SECOND).find("lists different kernels on a second call"),
            std::string::npos);
}

TEST(KernelHost, ALibraryThatSetsFlushToZeroWhenItLoadsIsDescribed) {
  HostedPlugin plugin(HOSTILE_FASTMATH, 10000);
  EXPECT_EQ(plugin.load_fp_change(), "flush-to-zero (FTZ) on, denormals-are-zero (DAZ) on");
}

TEST(KernelHost, ACallRunsInTheHostAndItsOutputsComeBack) {
  const auto rows = load_plugin(HOSTILE_CORRECT);
  const Kernel k = row_named(rows, "correct.layernorm_fwd");
  ASSERT_NE(hosted_plugin_of(k), nullptr);
  CallScope scope(2000);
  const Evaluation ev = evaluate(k, small_problem());
  EXPECT_TRUE(ev.pass) << ev.worst.output;
  EXPECT_FALSE(ev.unwritten_output);  // y, mean and rstd were all copied back
  EXPECT_EQ(scope.fp_change, "");
}

TEST(KernelHost, ACrashThrowsItsLabelAndTheNextCallGetsAFreshHost) {
  const auto rows = load_plugin(HOSTILE_CALL_RECURSES);
  CallScope scope(2000);
  try {
    evaluate(row_named(rows, "call_recurses.layernorm_fwd"), small_problem());
    ADD_FAILURE() << "the recursing kernel returned";
  } catch (const KernelCallFault& fault) {
    EXPECT_EQ(fault.label, "crash");
    EXPECT_NE(std::string(fault.what()).find("stack overflow"), std::string::npos) << fault.what();
  }
  // The same library's other kernel recurses too: what matters is that a new
  // host was started and reached the kernel again.
  EXPECT_THROW(evaluate(row_named(rows, "call_recurses.rmsnorm_fwd"), small_problem()), KernelCallFault);
}

TEST(KernelHost, ACallThatLeavesFlushToZeroSetIsReportedAndUndone) {
  const auto rows = load_plugin(HOSTILE_CALL_SETS_FTZ);
  const Kernel k = row_named(rows, "call_sets_ftz.layernorm_fwd");
  {
    CallScope scope(2000);
    evaluate(k, small_problem());
    EXPECT_EQ(scope.fp_change, "flush-to-zero (FTZ) on, denormals-are-zero (DAZ) on");
  }
  // run_isolated labels it, on every call (the host restored the state in between).
  const std::vector<Problem> problems(2, small_problem());
  for (const CaseResult& r : run_isolated(k, problems, {})) EXPECT_EQ(r.label, "fp_environment") << r.detail;
}

}  // namespace
}  // namespace normcheck::fuzz
