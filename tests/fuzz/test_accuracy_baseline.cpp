// fuzz/accuracy_baseline.h: a kernel's figures on its classes' realistic rows,
// the baseline file, and the comparison that fails a kernel that got worse.
// The negative control: the table's two-pass LayerNorm against its own
// baseline passes, its one-pass control held to the two-pass baseline fails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy_baseline.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const Kernel& kernel(const char* name) {
  const Kernel* k = find_kernel(name);
  if (!k) throw std::runtime_error(std::string("no kernel ") + name);
  return *k;
}

AccuracyFigure figure(const std::string& cls, const std::string& output, double ratio, double ulp) {
  AccuracyFigure f;
  f.kernel = "k";
  f.input_class = cls;
  f.output = output;
  f.problems = 4;
  f.error_over_bound = ratio;
  f.error_over_tight = output == "all" ? ratio / 2 : std::numeric_limits<double>::quiet_NaN();
  f.ulp = ulp;
  f.ulp_elementwise = 2 * ulp;
  return f;
}

AccuracyRun run_of(std::vector<AccuracyFigure> figures) { return AccuracyRun{7, std::move(figures)}; }

TEST(AccuracyBaseline, FileRoundTripsEveryFigureExactly) {
  AccuracyRun run = run_of({figure("d_257_4096", "all", 0.1, 1.0 / 3), figure("d_257_4096", "y", 0.1, 1.0 / 3),
                            figure("nonfinite", "all", kInf, kInf)});
  run.figures[0].error_over_tight = 0.01234567890123456789;
  const AccuracyRun back = parse_accuracy_baseline(format_accuracy_baseline(run), "b.txt");
  EXPECT_EQ(back.seed, 7u);
  ASSERT_EQ(back.figures.size(), run.figures.size());
  for (std::size_t i = 0; i < run.figures.size(); ++i) {
    const AccuracyFigure &a = run.figures[i], &b = back.figures[i];
    EXPECT_EQ(b.kernel, a.kernel);
    EXPECT_EQ(b.input_class, a.input_class);
    EXPECT_EQ(b.output, a.output);
    EXPECT_EQ(b.problems, a.problems);
    EXPECT_EQ(b.error_over_bound, a.error_over_bound);
    EXPECT_EQ(std::isnan(b.error_over_tight), std::isnan(a.error_over_tight));
    if (!std::isnan(a.error_over_tight)) {
      EXPECT_EQ(b.error_over_tight, a.error_over_tight);
    }
    EXPECT_EQ(b.ulp, a.ulp);
    EXPECT_EQ(b.ulp_elementwise, a.ulp_elementwise);
  }
}

TEST(AccuracyBaseline, AMalformedFileIsRefusedNamingItsLine) {
  const std::string seed = "# seed 7\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"k d_1_16 all 4 0.1 0.1 1 1\n", "no '# seed N' line"},
      {seed + "k d_1_16 all 4 0.1 0.1 1\n", "b.txt:2: expected"},
      {seed + "k d_1_16 all 4 0.1 0.1 1 1 9\n", "b.txt:2: expected"},
      {seed + "k d_1_16 all 4 -0.1 0.1 1 1\n", "b.txt:2: '-0.1' is not a non-negative number"},
      {seed + "k d_1_16 all 4.5 0.1 0.1 1 1\n", "b.txt:2: problems '4.5' is not a count"},
      {seed + "k d_1_16 all 4 0.1 0.1 1 1\nk d_1_16 all 4 0.1 0.1 1 1\n", "b.txt:3: a second line"},
      {"# seed -3\n", "b.txt:1: '# seed N'"},
      {"# seed 1e3\n", "b.txt:1: '# seed N'"},
  };
  for (const auto& [text, message] : bad) {
    try {
      parse_accuracy_baseline(text, "b.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// The seed line is read by the one seed parser (seed.h): decimal with
// leading zeros, or 0x hex, as --seed and NORMCHECK_SEED take it.
TEST(AccuracyBaseline, TheSeedIsReadAsTheCommandLineReadsIt) {
  EXPECT_EQ(parse_accuracy_baseline("# seed 010\n", "b.txt").seed, 10u);
  EXPECT_EQ(parse_accuracy_baseline("# seed 0x10\n", "b.txt").seed, 16u);
  EXPECT_EQ(parse_accuracy_baseline("# seed 18446744073709551615\n", "b.txt").seed, 18446744073709551615u);
}

TEST(AccuracyBaseline, AFigureIsWorseOnlyPastTheFactor) {
  const AccuracyRun before = run_of({figure("d_1_16", "all", 0.2, 1.0)});
  const AccuracyRun same = run_of({figure("d_1_16", "all", 0.2, 1.0)});
  EXPECT_TRUE(compare_accuracy(before, same, 1).worse.empty());
  const AccuracyRun grown = run_of({figure("d_1_16", "all", 0.3, 1.0)});
  const AccuracyComparison any = compare_accuracy(before, grown, 1);
  // error/bound and the tight standard's figure (half of it here) both grew 1.5x.
  ASSERT_EQ(any.worse.size(), 2u);
  EXPECT_EQ(any.worse[0].metric, "error/bound");
  EXPECT_EQ(any.worse[0].before, 0.2);
  EXPECT_EQ(any.worse[0].after, 0.3);
  EXPECT_EQ(any.worse[1].metric, "error/tight");
  EXPECT_TRUE(compare_accuracy(before, grown, 2).worse.empty());
  // From 0 any figure is worse, whatever the factor; so is a failed call (+inf).
  const AccuracyRun exact = run_of({figure("d_1_16", "all", 0, 0)});
  EXPECT_EQ(compare_accuracy(exact, same, 1000).worse.size(), 4u);
  const AccuracyRun crashed = run_of({figure("d_1_16", "all", kInf, kInf)});
  EXPECT_EQ(compare_accuracy(before, crashed, 1000).worse.size(), 4u);
  EXPECT_THROW(compare_accuracy(before, same, 0.5), std::invalid_argument);
}

TEST(AccuracyBaseline, AClassDeclinedNowIsWorseAndAMissingOneIsANote) {
  const AccuracyRun before = run_of({figure("d_1_16", "all", 0.2, 1.0), figure("d_17_256", "all", 0.2, 1.0)});
  AccuracyRun now = run_of({figure("d_1_16", "all", 0.2, 1.0), figure("eps0", "all", 0.2, 1.0)});
  now.figures[0].problems = 0;
  now.figures[0].declined = 4;
  const AccuracyComparison c = compare_accuracy(before, now, 1);
  ASSERT_EQ(c.worse.size(), 1u);
  EXPECT_EQ(c.worse[0].metric, "judged");
  ASSERT_EQ(c.notes.size(), 2u);
  EXPECT_NE(c.notes[0].find("k d_17_256 all is in the baseline but not measured now"), std::string::npos);
  EXPECT_NE(c.notes[1].find("k eps0 all is not in the baseline"), std::string::npos);
  // A kernel of the baseline that was not run is a note, not a failure.
  AccuracyRun other = before;
  for (AccuracyFigure& f : other.figures) f.kernel = "other";
  const AccuracyComparison o = compare_accuracy(before, other, 1);
  EXPECT_TRUE(o.worse.empty());
  EXPECT_NE(o.notes[0].find("k is in the baseline but was not run"), std::string::npos);
}

// The table's two-pass LayerNorm: the same figures on a second run (the rows
// and the kernel are deterministic), every class judged, none failed; its
// one-pass control held to the two-pass figures is worse on the
// |mean|/sigma classes and fails them outright (beyond its bound).
TEST(AccuracyBaseline, TheOnePassControlIsWorseThanTheTwoPassBaseline) {
  AccuracyRun twopass{kAccuracySeed, {}};
  const JudgedTally t = measure_accuracy(kernel("layernorm_fwd.twopass"), kAccuracySeed, {}, twopass.figures);
  EXPECT_GT(t.judged, 0);
  bool has_band = false;
  for (const AccuracyFigure& f : twopass.figures) {
    EXPECT_EQ(f.label, "") << f.input_class;
    EXPECT_GT(f.problems, 0) << f.input_class;
    has_band = has_band || f.input_class == "mean_sigma_10_1e3";
    // The classes that apply to a LayerNorm forward, and no other.
    EXPECT_NE(f.input_class, "many_rows");
    EXPECT_NE(f.input_class, "overflow16");
  }
  EXPECT_TRUE(has_band);
  const AccuracyRun reparsed = parse_accuracy_baseline(format_accuracy_baseline(twopass), "b.txt");
  AccuracyRun again{kAccuracySeed, {}};
  measure_accuracy(kernel("layernorm_fwd.twopass"), kAccuracySeed, {}, again.figures);
  const AccuracyComparison same = compare_accuracy(reparsed, again, 1);
  EXPECT_TRUE(same.worse.empty()) << format_comparison(same, "b.txt", 1);
  EXPECT_TRUE(same.notes.empty());

  AccuracyRun onepass{kAccuracySeed, {}};
  measure_accuracy(kernel("layernorm_fwd.naive_onepass"), kAccuracySeed, {}, onepass.figures);
  bool band_failed = false;
  for (AccuracyFigure& f : onepass.figures) {
    band_failed = band_failed || (f.input_class == "mean_sigma_10_1e3" && f.label == "accuracy");
    f.kernel = "layernorm_fwd.twopass";
  }
  EXPECT_TRUE(band_failed);
  const AccuracyComparison worse = compare_accuracy(reparsed, onepass, 10);
  bool band_worse = false;
  for (const AccuracyRegression& r : worse.worse)
    band_worse = band_worse || (r.input_class == "mean_sigma_10_1e3" && r.metric == "error/bound");
  EXPECT_TRUE(band_worse) << format_comparison(worse, "b.txt", 10);
}

}  // namespace
}  // namespace normcheck::fuzz
