// Batches through the kernel host (fuzz/call_batch.h, fuzz/kernel_host.h):
// a campaign's cases cross to the host together, and what one call of the
// batch does stays its own case's. The plugin (tests/fuzz/hostile's
// call_at) is correct but for one call, the one whose number in its host
// process HOSTILE_AT_CALL names, where it does what HOSTILE_AT_WHAT names.
// Every case is the same correct problem, so any label on a case other than
// the one whose call misbehaved, or a missing label on that one, is a
// misattribution; the control is the same run with no call misbehaving.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "isolation.h"
#include "kernel_host.h"
#include "plugin_loader.h"

namespace normcheck::fuzz {
namespace {

Problem problem() {
  Problem p;
  p.rows = 1;  // one row: no batch-variance reruns, so a case is one call
  p.cols = 8;
  p.x = {1, 2, 3, 4, 5, -1, 0.5f, 0.25f};
  return p;
}

// The results of `cases` cases of the plugin's LayerNorm, loaded afresh, with
// call number `at` of each of its hosts (they count from 1) doing `what`.
std::vector<CaseResult> run(const std::string& what, int at, std::size_t cases, bool run_twice = false,
                            bool stop_at_first_label = false, int timeout_ms = 2000) {
  setenv("HOSTILE_AT_CALL", std::to_string(at).c_str(), 1);
  setenv("HOSTILE_AT_WHAT", what.c_str(), 1);
  const std::vector<Kernel> rows = load_plugin(HOSTILE_CALL_AT);
  IsolationOptions o;
  o.run_twice = run_twice;
  o.stop_at_first_label = stop_at_first_label;
  o.timeout_ms = timeout_ms;
  const std::vector<Problem> problems(cases, problem());
  auto results = run_isolated(rows.at(0), problems, o);  // each new host reads the variables
  unsetenv("HOSTILE_AT_CALL");
  unsetenv("HOSTILE_AT_WHAT");
  return results;
}

// Every case has `label` where `labelled` holds its index and passes (finished,
// no label) elsewhere.
void expect_labels(const std::vector<CaseResult>& results, const std::set<std::size_t>& labelled,
                   const std::string& label) {
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    if (labelled.count(i)) {
      EXPECT_EQ(results[i].label, label) << results[i].detail;
    } else {
      EXPECT_TRUE(results[i].finished);
      EXPECT_EQ(results[i].label, "") << results[i].detail;
    }
  }
}

TEST(HostBatch, ControlEveryCasePasses) { expect_labels(run("none", 17, 40), {}, ""); }

// The 17th call of a batch crashes: its case (16) is the crash, with no
// evaluation; the cases before it keep their results, and the batch goes on
// in a new host from case 17, whose own 17th call (case 33) crashes again,
// and so on. 100 cases: more than one request's worth (64), the second
// continuing in the host the first left.
TEST(HostBatch, CrashOnThe17thCallNamesItsCase) {
  const auto results = run("crash", 17, 100);
  expect_labels(results, {16, 33, 50, 67, 84}, "crash");
  EXPECT_FALSE(results[16].finished);
  EXPECT_NE(results[16].detail.find("signal 11"), std::string::npos) << results[16].detail;
  EXPECT_NE(results[16].detail.find("in the kernel call"), std::string::npos) << results[16].detail;
}

// As a campaign runs it: each case's call runs twice in the host, so call
// 17 is case 8's first run; a new host from case 9 crashes at case 17.
TEST(HostBatch, CrashOnThe17thRunOfACampaignsBatchNamesItsCase) {
  expect_labels(run("crash", 17, 40, true), {8, 17, 26, 35}, "crash");
}

// The watchdog is per call: the hanging call is its case's hang, the calls
// before and after it are not.
TEST(HostBatch, HangOnThe17thCallNamesItsCase) {
  const auto results = run("hang", 17, 40, false, false, 200);
  expect_labels(results, {16, 33}, "hang");
  EXPECT_NE(results[16].detail.find("200 ms of CPU time"), std::string::npos) << results[16].detail;
}

// A write past the end of its output is that call's out_of_bounds (the
// guard page of its own array), and ends its host.
TEST(HostBatch, WritePastTheEndOnThe17thCallNamesItsCase) {
  const auto results = run("past_end", 17, 40);
  expect_labels(results, {16, 33}, "out_of_bounds");
  EXPECT_NE(results[16].detail.find("past array 'out'"), std::string::npos) << results[16].detail;
}

// A call that leaves FTZ set is its case's fp_environment; the host restores
// the state, so the calls after it (in the same host) are judged as usual.
TEST(HostBatch, FlushToZeroLeftByThe17thCallNamesItsCase) {
  expect_labels(run("ftz", 17, 40), {16}, "fp_environment");
}

// An output element left as the poison is its case's unwritten_output.
TEST(HostBatch, UnwrittenOutputOfThe17thCallNamesItsCase) {
  expect_labels(run("unwritten", 17, 40), {16}, "unwritten_output");
}

// A wrong result is its case's accuracy finding.
TEST(HostBatch, WrongResultOfThe17thCallNamesItsCase) { expect_labels(run("wrong", 17, 40), {16}, "accuracy"); }

// Stopping at the first label (shrinking, the campaign's batches): the cases
// after the crash are left unfinished and unlabelled, as one by one.
TEST(HostBatch, StopAtTheFirstLabelLeavesTheCasesAfterItUnrun) {
  const auto results = run("crash", 17, 40, false, true);
  ASSERT_EQ(results.size(), 40u);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_TRUE(results[i].finished && results[i].label.empty()) << i;
  EXPECT_EQ(results[16].label, "crash");
  for (std::size_t i = 17; i < 40; ++i) EXPECT_TRUE(!results[i].finished && results[i].label.empty()) << i;
}

}  // namespace
}  // namespace normcheck::fuzz
