// reports/verdict.cpp: what a fuzz finding does to a kernel's verdict. A
// kernel that passed every row of the workload but has a finding is not to be
// trusted (and fails the run when it is ours); a control the rows missed but
// the campaign caught is caught; without a finding nothing changes.
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

}  // namespace
}  // namespace normcheck::report
