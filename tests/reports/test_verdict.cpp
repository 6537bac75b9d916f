// reports/verdict.cpp: what a fuzz finding does to a kernel's verdict. A
// kernel that passed every row of the workload but has a finding is not to be
// trusted (and fails the run when it is ours); a control the rows missed but
// the campaign caught is caught; without a finding nothing changes. And the
// figure a kernel's speed is read by.
#include <string>

#include <gtest/gtest.h>

#include "normcheck/kernel.h"
#include "verdict.h"

namespace normcheck::report {
namespace {

// One passing row: the workload found nothing wrong with the kernel.
KernelAccuracy passing(const Kernel& k) {
  RowResult row;
  row.family = "normal";
  row.d = 8;
  row.evaluation.kernel = std::string(k.name);
  row.evaluation.op = k.op;
  row.evaluation.max_error_over_bound = 0.25;
  row.evaluation.worst.output = "y";
  return {&k, {row}};
}

fuzz::Finding finding(const Kernel& k, const std::string& label) {
  fuzz::Finding f;
  f.kernel = std::string(k.name);
  f.label = label;
  f.detail = "y[row 0, col 1] off by 3x its allowance";
  f.op = k.op;
  f.problem.rows = 1;
  f.problem.cols = 2;
  f.file = "/somewhere/campaign/" + f.kernel + "." + label + ".0123.txt";
  return f;
}

class FuzzVerdict : public ::testing::Test {
 protected:
  void SetUp() override {
    ours_ = find_kernel("layernorm_fwd.twopass");
    control_ = find_kernel("layernorm_fwd.naive_onepass");
    ASSERT_NE(ours_, nullptr);
    ASSERT_NE(control_, nullptr);
    ASSERT_EQ(ours_->origin, Origin::ours);
    ASSERT_EQ(control_->origin, Origin::control);
    data_.accuracy = {passing(*ours_), passing(*control_)};
    data_.fuzz = FuzzRun{16, {}};
  }
  const Kernel* ours_ = nullptr;
  const Kernel* control_ = nullptr;
  ReportData data_;
};

TEST_F(FuzzVerdict, NoFindingLeavesTheWorkloadsVerdict) {
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].status, "trusted");
  EXPECT_EQ(v[1].status, "not caught");
  EXPECT_TRUE(run_failed(v)) << "a control not caught fails the run";
}

TEST_F(FuzzVerdict, AFindingOnOursFailsItAndTheRun) {
  data_.fuzz->result.findings = {finding(*ours_, "accuracy")};
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].status, "fails");
  ASSERT_EQ(v[0].fuzz_findings.size(), 1u);
  EXPECT_NE(v[0].headline.find("accuracy"), std::string::npos) << v[0].headline;
  const std::string replay = "normcheck check --input findings/layernorm_fwd.twopass.accuracy.0123.txt --kernel "
                             "layernorm_fwd.twopass";
  EXPECT_EQ(replay_command(*v[0].fuzz_findings[0]), replay);
  bool noted = false;
  for (const std::string& n : v[0].notes) noted = noted || n.find(replay) != std::string::npos;
  EXPECT_TRUE(noted) << "the notes carry the replay command";
  EXPECT_TRUE(run_failed(v));
}

// Shows: the report's replay command shell-quotes a kernel name that is
// shell syntax (a name is data), so pasting it runs `check` on that kernel and
// nothing the name spells.
TEST(ReplayCommand, QuotesANameThatIsShellSyntax) {
  fuzz::Finding f;
  f.kernel = "x;touch${IFS}pwned";
  f.label = "accuracy";
  f.file = "/somewhere/campaign/x_touch__IFS_pwned.accuracy.0123.txt";
  EXPECT_EQ(replay_command(f),
            "normcheck check --input findings/x_touch__IFS_pwned.accuracy.0123.txt --kernel 'x;touch${IFS}pwned'");
}

TEST_F(FuzzVerdict, AFindingCatchesAControlTheRowsMissed) {
  data_.fuzz->result.findings = {finding(*control_, "nan")};
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].status, "trusted");
  EXPECT_EQ(v[1].status, "caught");
  EXPECT_FALSE(run_failed(v));
}

TEST_F(FuzzVerdict, WithoutTheCampaignNothingIsSaidOfIt) {
  data_.fuzz.reset();
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].status, "trusted");
  for (const std::string& n : v[0].notes) EXPECT_EQ(n.find("Fuzzing"), std::string::npos) << n;
  EXPECT_EQ(fuzz_summary(data_), "");
}

// A kernel's speed is read against the streaming limit, the fraction of
// possible; the copy, which streaming stores pass, is quoted beside it. Three
// shapes whose ratios have different medians: 0.7 to the limit and 2 to the
// copy, so a verdict taking either figure for the other reads wrong.
// A row outside the kernel's declared domain is declined: a limit named in its
// notes with the domain, never a failure; a kernel that declares nothing gets
// no such line.
TEST(DomainVerdict, RowsOutsideTheDeclaredDomainAreLimitsNotFindings) {
  Kernel declared = *find_kernel("rmsnorm_fwd.scalar");
  declared.range.min_eps = 1e-6f;
  Kernel open = declared;
  open.range = {};
  ReportData data;
  for (const Kernel* k : {&declared, &open}) {
    KernelAccuracy ka = passing(*k);
    RowResult outside = ka.rows.front();
    outside.eps = 0;
    outside.evaluation.pass = false;  // what it would have been, had it run
    outside.evaluation.declined = "eps = 0 is outside the kernel's declared domain eps>=1e-06";
    ka.rows.push_back(outside);
    data.accuracy.push_back(ka);
  }
  const auto v = verdicts(data);
  ASSERT_EQ(v.size(), 2u);
  for (const KernelVerdict& kv : v) {
    EXPECT_EQ(kv.status, "trusted");
    EXPECT_EQ(kv.rows_failed, 0);
    EXPECT_EQ(kv.rows_declined, 1);
  }
  const auto note_with = [](const KernelVerdict& kv, const std::string& what) {
    for (const std::string& note : kv.notes)
      if (note.find(what) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(note_with(v[0], "eps = ... is outside the kernel's declared domain eps>=1e-06 (1 row)"));
  EXPECT_TRUE(note_with(v[0], "Declared domain: eps>=1e-06; rows outside it are limits, not findings."));
  EXPECT_FALSE(note_with(v[1], "Declared domain:"));
}

TEST(SpeedVerdict, IsTheMedianFractionOfTheStreamingLimit) {
  const Kernel* ours = find_kernel("layernorm_fwd.twopass");
  const Kernel* control = find_kernel("layernorm_fwd.naive_onepass");
  ASSERT_NE(ours, nullptr);
  ASSERT_NE(control, nullptr);
  ReportData data;
  data.accuracy = {passing(*ours), passing(*control)};
  bench::BenchReport bench;
  const double stream[] = {0.5, 0.9, 0.7}, copy[] = {2.0, 1.0, 3.0};
  for (int i = 0; i < 3; ++i) {
    bench::BenchResult r;
    r.kernel = ours;
    r.shape = {1 << i, 64};
    r.ratio_to_stream = stream[i];
    r.ratio_to_copy = copy[i];
    bench.results.push_back(r);
  }
  data.bench = bench;
  const auto v = verdicts(data);
  ASSERT_TRUE(v[0].stream_ratio && v[0].copy_ratio);
  EXPECT_DOUBLE_EQ(*v[0].stream_ratio, 0.7);
  EXPECT_DOUBLE_EQ(*v[0].copy_ratio, 2.0);
  EXPECT_EQ(v[0].bench_shapes, 3);
  EXPECT_NE(v[0].speed.find("0.70x the streaming limit (2.00x a copy)"), std::string::npos) << v[0].speed;
  EXPECT_FALSE(v[1].stream_ratio) << "the control was not measured";
}

}  // namespace
}  // namespace normcheck::report
