// A kernel's accuracy held in its author's CI: its worst figures on the
// realistic rows of every input class that applies to it (input_class.h,
// severity_problems, drawn from a fixed seed), recorded in a baseline file and
// compared with a later run, which fails where a figure got worse by more than
// a stated factor. `report --check-baseline` does the same for the table's
// kernels on the report's workload (reports/baseline.h).
//
// The file, one figure line per kernel x class x output ('#' starts a comment):
//   # seed 20261206
//   my_norm d_257_4096 all 16 0.125 0.031 1.5 2
//   my_norm d_257_4096 y 16 0.125 - 1.5 2
// columns: kernel, class, output, problems judged, error/bound, error over the
// tight standard, ULPs of the row's scale, ULPs of the output's format. The
// output `all` is the evaluation's figures over every output (the tight
// standard is one figure of the whole evaluation, "-" on the other lines);
// each output of the spec has its own line. Figures are printed with 17
// significant digits, so the same build on the same rows reproduces them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isolation.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// The worst figures of one kernel on one class's realistic rows, for one
// output or for `all`. +inf: a NaN/inf where the exact result is finite (or
// the reverse), or a call that failed (crash, hang, out-of-bounds write, ...).
struct AccuracyFigure {
  std::string kernel;
  std::string input_class;        // InputClass::id
  std::string output;             // "all", or OutputError::output
  int64_t problems = 0;           // judged; 0 when the kernel declined every one
  int64_t declined = 0;           // outside the kernel's declared range (not in the file)
  // `all` only, not in the file: the label of the first problem that failed
  // (accuracy, nan, crash, ...; "" when every one passed).
  std::string label;
  double error_over_bound = 0;
  double error_over_tight = 0;    // `all` only: Evaluation::max_error_over_tight; NaN elsewhere ("-")
  double ulp = 0;                 // ULPs of the row's scale (Evaluation::max_ulp)
  double ulp_elementwise = 0;     // ULPs of the output's format (Evaluation::max_ulp_elementwise)
};

struct AccuracyRun {
  uint64_t seed = 0;
  std::vector<AccuracyFigure> figures;
};

// The default seed of the rows; a baseline file names its own.
inline constexpr uint64_t kAccuracySeed = 20261206;

// The realistic rows of every input class whose rows `kernel` meets (a
// class applies when its own first problem classifies into it for this
// kernel: the |mean|/sigma bands for LayerNorm, many_rows for a backward,
// overflow16 for a 16-bit kernel), in the table's order, each with its class.
struct AccuracyProblem {
  std::string input_class;  // InputClass::id
  Problem problem;
};
std::vector<AccuracyProblem> accuracy_problems(const Kernel& kernel, uint64_t seed);

// The figures of one kernel, problem by problem: each case's result (run by
// run_case, or judged from a harness's recorded outputs) added to its class.
class AccuracyTally {
 public:
  explicit AccuracyTally(std::string kernel) : kernel_(std::move(kernel)) {}
  void add(const std::string& input_class, const CaseResult& result);
  // Each class met: `all` first, then each output in the order first met.
  const std::vector<AccuracyFigure>& figures() const { return figures_; }
  const JudgedTally& judged() const { return tally_; }

 private:
  std::string kernel_;
  std::vector<AccuracyFigure> figures_;
  JudgedTally tally_;
};

// Runs `kernel` on accuracy_problems(), each case with run_case() as the
// fuzz campaign runs it, into an AccuracyTally. Appends its figures; returns
// the problems judged and declined (nothing judged is never a pass).
JudgedTally measure_accuracy(const Kernel& kernel, uint64_t seed, const IsolationOptions& isolation,
                      std::vector<AccuracyFigure>& out);

std::string format_accuracy_baseline(const AccuracyRun& run);
// Throws std::invalid_argument naming the file and line on a malformed file.
AccuracyRun parse_accuracy_baseline(const std::string& text, const std::string& file_name);
AccuracyRun read_accuracy_baseline(const std::string& path);

// One figure that got worse than the baseline by more than the factor.
struct AccuracyRegression {
  std::string kernel, input_class, output;
  std::string metric;  // "error/bound", "error/tight", "ULP (row's scale)", "ULP (elementwise)", "judged"
  double before = 0, after = 0;
};

struct AccuracyComparison {
  std::vector<AccuracyRegression> worse;
  std::vector<std::string> notes;  // a kernel or class on one side only
};

// Compares `now` with `baseline`: a figure is worse when it exceeds
// worse_by times its baseline value (from 0 any positive value is worse, and
// NaN always is); a class judged in the baseline and declined now is worse
// ("judged"). A kernel of the baseline not run now, and a kernel, class or
// output not in the baseline, is a note. worse_by >= 1.
AccuracyComparison compare_accuracy(const AccuracyRun& baseline, const AccuracyRun& now, double worse_by);

// The comparison as the CLI prints it.
std::string format_comparison(const AccuracyComparison& c, const std::string& file_name, double worse_by);

// The `all` figures of the classes in which a problem failed (a finding
// whatever the baseline: the figures are relative, the bound is not), and
// their text: "  kernel class: 375x its bound" per line.
std::vector<const AccuracyFigure*> failed_classes(const std::vector<AccuracyFigure>& figures);
std::string format_failed(const std::vector<const AccuracyFigure*>& failed);

// One kernel's figures as a table (the `all` lines, and a line per output
// beneath), as the CLI prints them.
std::string format_figures(const std::vector<AccuracyFigure>& figures);

}  // namespace normcheck::fuzz
