// A fuzz campaign: problems from the property suite's generators
// (properties/generators.h) run on kernels in a child process (isolation.h).
// Findings are grouped by label and input class (input_class.h): the campaign
// goes on after a first finding, and each new (label, class) of a kernel is
// shrunk (shrink_problem) to the smallest problem that still shows the same
// label in the same class, saved as a problem file (row_file.h) that
// `normcheck check --input FILE` replays, and measured on the class's
// realistic rows (its severity).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "input_class.h"
#include "isolation.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

struct CampaignOptions {
  std::vector<const Kernel*> kernels;
  int64_t cases = 0;        // generated cases per kernel (0: use seconds)
  double seconds = 0;       // wall-clock budget of the whole campaign, split over the kernels
  uint64_t seed = 0;
  int jobs = 1;                          // batches run at once (each in its own child)
  int shard_index = 0, shard_count = 1;  // this run generates case numbers = shard_index mod shard_count
  std::filesystem::path corpus_dir;      // findings saved here; its files for a kernel replayed first
  IsolationOptions isolation;
  double shrink_seconds = 20;            // budget for shrinking one finding
  // New (label, class) findings kept per kernel; the cases go on, and what
  // is seen beyond the cap is counted (CampaignResult::beyond_cap).
  int max_findings_per_kernel = 12;
  // Run each finding's class's realistic rows (input_class.h) on the kernel.
  bool severity = true;
  // Also generate beyond each kernel's declared input range (every float,
  // NaN and inf included). What a kernel does there is reported as one of its
  // limits, not as a finding: it never promised anything there.
  bool wide_range = false;
  std::vector<std::string> notes;        // extra comment lines for saved files
  // Called after every batch (for a progress line).
  std::function<void(const std::string& kernel, int64_t cases, std::size_t findings, double seconds)> progress;
};

// A finding's class's realistic rows run on the kernel (severity_problems).
struct Severity {
  std::string rows;                   // severity_rows_text: what was run
  int problems = 0;                   // run to the end (declined ones not counted)
  int declined = 0;                   // the kernel declined them (outside its declared range)
  // The worst over the problems run: error/bound, +inf for a NaN/inf where
  // the exact result is finite (or the reverse); label is that problem's
  // ("" when every problem passed), and a label other than accuracy or nan
  // (crash, hang, ...) ends the run there.
  double worst_error_over_bound = 0;
  // The worst Evaluation::max_error_over_tight over the problems run (the
  // rows are realistic by design, so each is held to the tight standard).
  double worst_error_over_tight = 0;
  std::string label;
  std::string worst_row;              // SeverityProblem::what of the worst problem
  struct Row {
    std::string what;                 // SeverityProblem::what
    std::string label;                // "" (within its bound), accuracy, nan, crash, ...; "declined"
    double error_over_bound = 0;
  };
  std::vector<Row> each;              // every problem, in order, up to the one that ended the run
};

struct Finding {
  std::string kernel;
  std::string label;
  std::string detail;
  Op op{};
  DType dtype{};
  Problem problem;               // shrunk
  std::filesystem::path file;    // where it was saved (empty: a library's loading is the finding, no problem)
  bool from_corpus = false;      // replayed from the corpus, not newly found
  std::string input_class;       // InputClass::id ("" for a library's loading)
  double error_over_bound = 0;   // of the shrunk problem (+inf: a NaN/inf mismatch; 0 for non-numerical labels)
  double error_over_tight = 0;   // of the shrunk problem: Evaluation::max_error_over_tight
  // Absent for a library's loading, for a hang (each row would cost a
  // timeout) and with CampaignOptions::severity off.
  std::optional<Severity> severity;
};

struct CampaignResult {
  int64_t cases = 0;             // cases run, corpus replays, shrink candidates and severity rows not counted
  double seconds = 0;
  std::vector<Finding> findings; // at most one per (kernel, label, class), at most max_findings_per_kernel per kernel
  // (kernel, count): labelled cases of a (label, class) not kept because the kernel's cap was reached.
  std::vector<std::pair<std::string, int64_t>> beyond_cap;
  // wide_range: labelled cases outside the kernel's declared range (file
  // empty: limits are not saved), at most one per (kernel, label).
  std::vector<Finding> limits;
  // Per kernel fuzzed, in order: its generated cases judged and declined.
  // A kernel with none judged has no verdict (docs/plugins.md, "Nothing
  // judged is never a pass").
  std::vector<std::pair<std::string, JudgedTally>> judged;
};

CampaignResult run_campaign(const CampaignOptions& options);

// Greedy shrinking: repeatedly takes the first candidate of shrink_problem()
// that still shows `label` in the input class `class_id` on `kernel`, until
// none does or the budget ends. Returns the smallest problem and its result.
struct Shrunk {
  Problem problem;
  CaseResult result;
};
Shrunk shrink_finding(const Kernel& kernel, const Problem& problem, const CaseResult& result,
                      const std::string& class_id, const IsolationOptions& isolation, double seconds);

// Runs the realistic rows of `input_class` on `kernel` one by one with
// run_case (isolation.h): a plugin's kernel in its kernel host, as every case
// of the campaign; a kernel of the table in this process, which it is trusted
// not to crash, because a fork of a process in which a multithreaded library
// (libtorch's thread pool, loaded by the report's accuracy rows) has started
// its threads can deadlock in the child on rows as wide as these. For the
// same reason run_campaign() measures every severity after its last case:
// these rows start such pools here. A row with a call label (crash, ...)
// ends the run there.
Severity measure_severity(const Kernel& kernel, const InputClass& input_class, uint64_t seed,
                          const IsolationOptions& isolation);

// "299x its bound", "9.6x the tight standard", "nan", "crash": a ratio and
// its label as the text and the report print them (the tight standard's
// figure when only it was broken, evaluate.h: beyond_tight_only).
std::string ratio_text(const std::string& label, double error_over_bound, double error_over_tight = 0);

// "on realistic rows (d = 768, 4096; ...): worst 299x its bound (d = 768, eps = 1e-05, |mean|/sigma = 100)".
std::string severity_text(const Severity& severity);

}  // namespace normcheck::fuzz
