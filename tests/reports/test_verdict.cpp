// reports/verdict.cpp: a kernel's grade from its rows and fuzz findings
// (trusted, less accurate, wrong, unsafe; a control caught or not), what a
// fuzz finding does to it (a kernel that passed every row but has a finding
// is graded down, and fails the run when it is ours; a control the rows
// missed but the campaign caught is caught; without a finding nothing
// changes), the bound a verdict names, and the figure a kernel's speed is
// read by (the shapes out of cache).
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "broken_kernels.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/invoke.h"
#include "normcheck/kernel.h"
#include "normcheck/reimplementation.h"
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
  EXPECT_EQ(v[0].grade, Grade::trusted);
  EXPECT_EQ(v[1].grade, Grade::not_caught);
  EXPECT_TRUE(run_failed(v)) << "a control not caught fails the run";
}

TEST_F(FuzzVerdict, AFindingOnOursFailsItAndTheRun) {
  data_.fuzz->result.findings = {finding(*ours_, "accuracy")};
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].grade, Grade::less_accurate);
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
  EXPECT_EQ(v[0].grade, Grade::trusted);
  EXPECT_EQ(v[1].grade, Grade::caught);
  EXPECT_FALSE(run_failed(v));
}

TEST_F(FuzzVerdict, WithoutTheCampaignNothingIsSaidOfIt) {
  data_.fuzz.reset();
  const auto v = verdicts(data_);
  EXPECT_EQ(v[0].grade, Grade::trusted);
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
    EXPECT_EQ(kv.grade, Grade::trusted);
    EXPECT_EQ(kv.rows_failed, 0);
    EXPECT_EQ(kv.rows_declined, 1);
  }
  const auto note_with = [](const KernelVerdict& kv, const std::string& what) {
    for (const std::string& note : kv.notes)
      if (note.find(what) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(note_with(v[0], "eps outside the kernel's declared domain eps>=1e-06 (1 row)"));
  EXPECT_TRUE(note_with(v[0], "Declared domain: eps>=1e-06; rows outside it are limits, not findings."));
  EXPECT_FALSE(note_with(v[1], "Declared domain:"));
}

// Rows declined for |x| at different d group as one reason, the domain's,
// without the row's own limit or any placeholder for it.
TEST(DomainVerdict, DeclinedRowsGroupWithoutTheirFigures) {
  Kernel declared = *find_kernel("rmsnorm_fwd.scalar");
  declared.range.max_abs_x = 0x1p62;
  declared.range.sqrt_d_scaled = true;
  KernelAccuracy ka = passing(declared);
  for (const char* reason : {"|x| = 1.2e+18 is outside the kernel's declared domain |x|<=2^62/sqrt(d) (|x| <= 1.1e+18 here)",
                             "|x| = 3e+17 is outside the kernel's declared domain |x|<=2^62/sqrt(d) (|x| <= 2.4e+17 here)"}) {
    RowResult outside = ka.rows.front();
    outside.evaluation.pass = false;
    outside.evaluation.declined = reason;
    ka.rows.push_back(outside);
  }
  ReportData data;
  data.accuracy.push_back(ka);
  const auto v = verdicts(data);
  ASSERT_EQ(v.size(), 1u);
  bool grouped = false;
  for (const std::string& note : v[0].notes) {
    if (note.find("declared domain") != std::string::npos) {
      EXPECT_EQ(note.find("..."), std::string::npos) << note;
    }
    grouped = grouped || note.find("|x| outside the kernel's declared domain |x|<=2^62/sqrt(d) (2 rows)") != std::string::npos;
  }
  EXPECT_TRUE(grouped);
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

// ---- Grades from real kernels run by evaluate() ----

// A realistic LayerNorm/RMSNorm row: d = 768, x = c + N(0, 1).
Problem realistic_row(const Kernel& k, double offset, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Problem p;
  p.rows = 1;
  p.cols = 768;
  for (int64_t j = 0; j < p.cols; ++j) p.x.push_back(static_cast<float>(offset + normal(rng)));
  if (k.op == Op::layernorm_bwd || k.op == Op::rmsnorm_bwd)
    for (int64_t j = 0; j < p.cols; ++j) p.dy.push_back(static_cast<float>(normal(rng)));
  return p;
}

RowResult row_of(const Kernel& k, const Problem& p, const std::string& family) {
  RowResult r;
  r.family = family;
  r.d = p.cols;
  r.eps = p.eps;
  r.evaluation = evaluate(k, p);
  return r;
}

// The verdict of one kernel on the given rows, without fuzzing or bench.
KernelVerdict verdict_on(const Kernel& k, std::vector<RowResult> rows) {
  ReportData data;
  data.accuracy_options.lengths = {768};
  data.accuracy = {{&k, std::move(rows)}};
  auto v = verdicts(data);
  return v.at(0);
}

// A broken kernel (tests/broken_kernels, origin control there) as a third
// party's: held to the default bound, graded rather than caught.
Kernel as_third_party(Kernel k) {
  k.origin = Origin::third_party;
  return k;
}

// Negative control: a correct kernel is not graded down.
TEST(Grade, ACorrectKernelIsTrusted) {
  const Kernel* k = find_kernel("layernorm_fwd.twopass");
  ASSERT_NE(k, nullptr);
  const KernelVerdict v = verdict_on(*k, {row_of(*k, realistic_row(*k, 0, 1), "gaussian_offset"),
                                          row_of(*k, realistic_row(*k, 100, 2), "gaussian_offset")});
  EXPECT_EQ(v.grade, Grade::trusted) << v.headline;
  EXPECT_EQ(to_string(v.grade), "trusted");
  EXPECT_LE(v.worst_ratio, 1);
  EXPECT_FALSE(run_failed({v}));
}

// torch.std's d - 1 variance (claim S3): y off by a factor sqrt(d / (d - 1)),
// finite everywhere. Held to the default bound, it is less accurate, and the
// verdict says against which bound and by how much.
TEST(Grade, ABiasedVarianceIsLessAccurateAgainstTheDefaultBound) {
  const Kernel k = as_third_party(broken::unbiased_variance_kernel());
  ASSERT_EQ(k.bound, default_bound(k.op));
  const KernelVerdict v = verdict_on(k, {row_of(k, realistic_row(k, 0, 3), "gaussian_offset")});
  ASSERT_EQ(v.rows_failed, 1) << "the broken kernel passed its row";
  EXPECT_EQ(v.rows_nonfinite_mismatch, 0);
  EXPECT_EQ(v.grade, Grade::less_accurate) << v.headline;
  EXPECT_EQ(to_string(v.grade), "less accurate");
  EXPECT_GT(v.worst_ratio, 1);
  EXPECT_NE(v.headline.find("Less accurate than the default bound (what a careful float32 two-pass kernel meets"),
            std::string::npos)
      << v.headline;
  EXPECT_NE(v.headline.find("up to " + figure(v.worst_ratio) + "x it"), std::string::npos) << v.headline;
  EXPECT_NE(v.headline.find("gaussian_offset (1 row)"), std::string::npos) << v.headline;
  EXPECT_FALSE(run_failed({v})) << "a third party's finding is reported, not a run failure";
}

// The same defect in a kernel of ours fails the run.
TEST(Grade, OursGradedDownFailsTheRun) {
  Kernel k = broken::unbiased_variance_kernel();
  k.origin = Origin::ours;
  const KernelVerdict v = verdict_on(k, {row_of(k, realistic_row(k, 0, 3), "gaussian_offset")});
  EXPECT_EQ(v.grade, Grade::less_accurate);
  EXPECT_TRUE(run_failed({v}));
}

// A third party held to the default bound and measured against its own
// algorithm's (the bound of the kernel that reimplements it): the headline
// says by how much it misses the standard, and how it does against its own.
TEST(Grade, AThirdPartyNamesTheStandardAndItsOwnAlgorithmsBound) {
  const Kernel* torch = nullptr;
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::third_party && k.op == Op::layernorm_fwd && reimplementation_of(k)) torch = &k;
  if (!torch) GTEST_SKIP() << "this build has no third party whose algorithm a kernel of ours reimplements";
  std::vector<RowResult> rows(2);
  for (RowResult& r : rows) {
    r.family = "gaussian_offset";
    r.d = 768;
    r.evaluation.worst.output = "rstd";
  }
  rows[0].evaluation.max_error_over_bound = 3;  // misses the default bound 3x ...
  rows[0].evaluation.pass = false;
  rows[0].algorithm_ratio = 0.5;                // ... within its algorithm's
  rows[1].evaluation.max_error_over_bound = 0.25;
  rows[1].algorithm_ratio = 0.125;
  const KernelVerdict v = verdict_on(*torch, std::move(rows));
  EXPECT_EQ(v.grade, Grade::less_accurate);
  EXPECT_NE(v.headline.find("Less accurate than the default bound (what a careful float32 two-pass kernel meets"),
            std::string::npos)
      << v.headline;
  EXPECT_NE(v.headline.find("up to 3x it, on gaussian_offset (1 row)"), std::string::npos) << v.headline;
  EXPECT_NE(v.headline.find("Against its algorithm's own bound (that of " +
                            std::string(reimplementation_of(*torch)->name) +
                            ", which reimplements it): worst 0.5x, 0 of the 2 rows run break it."),
            std::string::npos)
      << v.headline;
  EXPECT_DOUBLE_EQ(v.algorithm_worst, 0.5);
}

// nan_to_num after RMSNorm: a finite y where the exact one is NaN (an inf in
// x). A NaN/inf mismatch is wrong, not merely less accurate.
TEST(Grade, ANonFiniteMismatchIsWrong) {
  const Kernel k = as_third_party(broken::nan_to_num_kernel());
  Problem p = realistic_row(k, 0, 4);
  p.x[5] = std::numeric_limits<float>::infinity();
  const KernelVerdict v = verdict_on(k, {row_of(k, p, "nonfinite"), row_of(k, realistic_row(k, 0, 5), "normal")});
  ASSERT_EQ(v.rows_nonfinite_mismatch, 1);
  EXPECT_EQ(v.grade, Grade::wrong) << v.headline;
  EXPECT_NE(v.headline.find("nonfinite, eps = 1e-05 (1 row)"), std::string::npos) << v.headline;
  EXPECT_EQ(v.worst_finite_ratio, verdict_on(k, {row_of(k, realistic_row(k, 0, 5), "normal")}).worst_ratio)
      << "the finite figure leaves the mismatching row out";
}

// Writes one float past the end of y: evaluate()'s guard zone sees it.
void writes_past_y(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                   int64_t rows, int64_t cols, float eps) {
  invoke(*find_kernel("layernorm_fwd.twopass"), {.rows = rows, .cols = cols, .eps = eps, .x = x, .gamma = gamma,
                                                 .beta = beta, .out = y, .mean = mean, .stat = rstd});
  y[rows * cols] = 0;
}

TEST(Grade, AWriteOutsideItsOutputIsUnsafe) {
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  ASSERT_NE(twopass, nullptr);
  Kernel k = *twopass;
  k.name = "test.writes_past_y";
  k.origin = Origin::third_party;
  k.fn = nc_layernorm_fwd_fn{writes_past_y};
  const KernelVerdict v = verdict_on(k, {row_of(k, realistic_row(k, 0, 6), "gaussian_offset")});
  ASSERT_EQ(v.rows_memory, 1) << "evaluate() missed the write";
  EXPECT_EQ(v.grade, Grade::unsafe) << v.headline;
  EXPECT_NE(v.headline.find("wrote outside its outputs"), std::string::npos) << v.headline;
}

// A known-bad control is graded as what it is: caught when it breaks its
// bound, whatever the defect (here NaN/inf where the exact result is finite
// would grade another kernel wrong).
TEST(Grade, AFailingControlIsCaught) {
  const Kernel k = broken::nan_to_num_kernel();
  ASSERT_EQ(k.origin, Origin::control);
  Problem p = realistic_row(k, 0, 4);
  p.x[5] = std::numeric_limits<float>::infinity();
  const KernelVerdict v = verdict_on(k, {row_of(k, p, "nonfinite")});
  EXPECT_EQ(v.grade, Grade::caught) << v.headline;
  EXPECT_FALSE(run_failed({v}));
}

// ---- Grades from constructed findings (labels and severities) ----

class FindingGrade : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = find_kernel("layernorm_fwd.twopass");
    ASSERT_NE(kernel_, nullptr);
  }
  // A verdict that passed its rows and has one finding labelled `label`.
  Grade grade_with(const std::string& label, std::optional<fuzz::Severity> severity = std::nullopt) {
    finding_ = finding(*kernel_, label);
    finding_.severity = severity;
    KernelVerdict v;
    v.kernel = kernel_;
    v.rows_run = 10;
    v.fuzz_findings = {&finding_};
    if (severity && severity->problems > 0) v.realistic_worst = severity->worst_error_over_bound;
    return grade_of(v);
  }
  static fuzz::Severity severity(double worst, const std::string& label) {
    fuzz::Severity s;
    s.problems = 8;
    s.worst_error_over_bound = worst;
    s.label = label;
    return s;
  }
  const Kernel* kernel_ = nullptr;
  fuzz::Finding finding_;
};

TEST_F(FindingGrade, CallFaultsAreUnsafe) {
  for (const char* label : {"crash", "hang", "out_of_bounds", "writes_input", "unwritten_output", "fp_environment"})
    EXPECT_EQ(grade_with(label), Grade::unsafe) << label;
}

TEST_F(FindingGrade, NanAndNondeterministicAreWrong) {
  EXPECT_EQ(grade_with("nan"), Grade::wrong);
  EXPECT_EQ(grade_with("nondeterministic"), Grade::wrong);
  EXPECT_EQ(grade_with("batch_variant"), Grade::wrong);  // bits that depend on the rows around a row
}

// A kernel that rounds elsewhere than its spec declares: its numbers, not its
// call, are in question.
TEST_F(FindingGrade, APolicyMismatchIsLessAccurateNotUnsafe) {
  EXPECT_EQ(grade_with("policy_mismatch"), Grade::less_accurate);
}

// An accuracy finding is less accurate up to kWrongFactor x the bound on
// realistic rows, wrong beyond it (and wrong when a realistic row gives NaN,
// unsafe when one crashes).
TEST_F(FindingGrade, AccuracyIsGradedByItsRealisticRows) {
  EXPECT_EQ(grade_with("accuracy"), Grade::less_accurate) << "no severity measured";
  EXPECT_EQ(grade_with("accuracy", severity(0.5, "")), Grade::less_accurate) << "realistic rows within the bound";
  EXPECT_EQ(grade_with("accuracy", severity(kWrongFactor, "accuracy")), Grade::less_accurate);
  EXPECT_EQ(grade_with("accuracy", severity(2 * kWrongFactor, "accuracy")), Grade::wrong);
  EXPECT_EQ(grade_with("accuracy", severity(std::numeric_limits<double>::infinity(), "nan")), Grade::wrong);
  EXPECT_EQ(grade_with("accuracy", severity(0, "crash")), Grade::unsafe);
}

TEST(Grade, ControlsAndDeclines) {
  const Kernel* control = find_kernel("layernorm_fwd.naive_onepass");
  ASSERT_NE(control, nullptr);
  KernelVerdict v;
  v.kernel = control;
  EXPECT_EQ(grade_of(v), Grade::declined) << "nothing ran";
  v.rows_run = 4;
  EXPECT_EQ(grade_of(v), Grade::not_caught);
  v.rows_failed = 1;
  v.rows_memory = 1;
  EXPECT_EQ(grade_of(v), Grade::caught) << "a control is caught, not graded";
}

// The bound a verdict names: the default bound for the third parties (held to
// it; a 16-bit one with its outputs rounded), the algorithm's own for ours.
TEST(BoundText, NamesTheDefaultBoundForThirdParties) {
  const std::string default_text = "the default bound (what a careful float32 two-pass kernel meets";
  for (const Kernel& k : kernel_table()) {
    if (k.origin == Origin::third_party) {
      const std::string expected =
          k.dtype == DType::f32 ? default_text
                                : "the default bound with the outputs rounded to " + std::string(to_string(k.dtype));
      EXPECT_EQ(bound_text(k).rfind(expected, 0), 0u) << k.name << ": " << bound_text(k);
    }
  }
  const Kernel* ours = find_kernel("layernorm_fwd.welford");
  ASSERT_NE(ours, nullptr);
  EXPECT_EQ(bound_text(*ours), "its algorithm's own bound");
}

// The speed figure is the median over the shapes out of cache: a shape in
// cache (ratio above the streaming limit) does not move it.
TEST(SpeedVerdict, IsTheMedianOverTheShapesOutOfCache) {
  const Kernel* ours = find_kernel("layernorm_fwd.twopass");
  ASSERT_NE(ours, nullptr);
  ReportData data;
  data.accuracy = {passing(*ours)};
  bench::BenchReport bench;
  bench.cache_bytes = std::size_t{32} << 20;
  const double stream[] = {3.0, 0.6, 0.8, 0.7};
  for (int i = 0; i < 4; ++i) {
    bench::BenchResult r;
    r.kernel = ours;
    r.shape = {1 << i, 64};
    r.ratio_to_stream = stream[i];
    r.ratio_to_copy = 2 * stream[i];
    r.out_of_cache = i > 0;
    bench.results.push_back(r);
  }
  data.bench = bench;
  const auto v = verdicts(data);
  ASSERT_TRUE(v[0].stream_ratio);
  EXPECT_DOUBLE_EQ(*v[0].stream_ratio, 0.7) << "the in-cache shape's 3.0 was counted";
  EXPECT_EQ(v[0].bench_shapes, 3);
  EXPECT_FALSE(v[0].speed_in_cache);
  EXPECT_NE(v[0].speed.find("median of 3 shapes out of cache (bytes moved per call >= 2x the 32 MiB last-level cache)"),
            std::string::npos)
      << v[0].speed;
  EXPECT_EQ(speed_scope(data),
            "3 of the 4 bench shapes are out of cache for some kernel (2x64, 4x64, 8x64: bytes moved per call >= 2x "
            "the 32 MiB last-level cache); each kernel's speed columns are medians over its shapes out of cache.");

  // No shape out of cache: the median over every shape, said to be in cache.
  for (auto& r : data.bench->results) r.out_of_cache = false;
  const auto in_cache = verdicts(data);
  EXPECT_TRUE(in_cache[0].speed_in_cache);
  EXPECT_EQ(in_cache[0].bench_shapes, 4);
  EXPECT_DOUBLE_EQ(*in_cache[0].stream_ratio, 0.75);
  EXPECT_NE(in_cache[0].speed.find("median of 4 shapes in cache: no shape is out of cache"), std::string::npos)
      << in_cache[0].speed;
  EXPECT_EQ(speed_scope(data).rfind("None of the 4 bench shapes is out of cache", 0), 0u) << speed_scope(data);
}

}  // namespace
}  // namespace normcheck::report

namespace normcheck::report {
namespace {

// A forward norm's two verdicts: its grade against its policy (the spec its op
// and dtype name), and y's distance from exact math beside its policy's own.
// A bf16 row is held to bf16's one rounding: within it, the kernel is as far
// from exact math as its policy's correctly rounded y, half an ULP at most.
TEST(PolicyVerdict, AForwardNormNamesItsPolicyAndItsDistanceFromExactMath) {
  const Kernel* k = find_kernel("rmsnorm_fwd.hwy_bf16");
  ASSERT_NE(k, nullptr);
  const KernelVerdict v = verdict_on(*k, {row_of(*k, realistic_row(*k, 0, 4), "gaussian_offset")});
  EXPECT_EQ(v.grade, Grade::trusted) << v.headline;
  EXPECT_EQ(v.policy, "rmsnorm fwd dtype=bf16");
  EXPECT_NE(v.policy_name.find("one rounding at the output"), std::string::npos) << v.policy_name;
  ASSERT_TRUE(v.exact_math_ulp && v.policy_exact_math_ulp);
  EXPECT_LE(*v.policy_exact_math_ulp, 0.5);  // the correct rounding: half an ULP of y's format at most
  EXPECT_GT(*v.policy_exact_math_ulp, 0);    // 768 draws: some y is not a bf16 value
  EXPECT_LE(*v.exact_math_ulp, 0.5);         // the only value the range admits is that rounding (docs/ops.md)
}

// Negative control: the other ops have no policy, and no figure stands for one.
TEST(PolicyVerdict, ABackwardHasNone) {
  const Kernel* k = find_kernel("rmsnorm_bwd.hwy");
  ASSERT_NE(k, nullptr);
  const KernelVerdict v = verdict_on(*k, {row_of(*k, realistic_row(*k, 0, 5), "gaussian_offset")});
  EXPECT_TRUE(v.policy.empty());
  EXPECT_FALSE(v.exact_math_ulp.has_value());
}

}  // namespace
}  // namespace normcheck::report
