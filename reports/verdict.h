// The verdict per kernel a user acts on: on which inputs to trust it, what it
// declines, why it fails where it does, and how fast it is next to the memory
// limit and oneDNN. Markdown, HTML, JSON and JUnit all print these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report_data.h"

namespace normcheck::report {

struct Count {
  std::string what;
  int64_t rows = 0;
};

struct KernelVerdict {
  const Kernel* kernel = nullptr;
  int64_t rows_run = 0, rows_declined = 0, rows_failed = 0;
  int64_t rows_nonfinite_mismatch = 0, rows_memory = 0;  // subsets of rows_failed
  // "trusted": no row failed; "fails": some row failed; "caught": a control
  // that failed, as it must; "not caught": a control that passed everything;
  // "declined": nothing ran.
  std::string status;
  std::string advice;                  // a few words for the verdict table
  std::string headline;                // one sentence: trust on which inputs
  std::vector<std::string> notes;      // why it fails, what it declines, ULP read right
  std::vector<Count> failing_families; // family: failed rows
  std::vector<Count> decline_reasons;  // reason: declined rows
  double worst_ratio = 0;              // max error/bound over the rows run
  double max_ulp = 0;
  std::string worst_output;
  const RowResult* worst_row = nullptr;
  std::vector<const fuzz::Finding*> fuzz_findings;  // the fuzz campaign's, into data.fuzz
  // Medians over the bench shapes of throughput / the streaming limit of the
  // kernel's direction, / a copy, and / oneDNN's kernel for the same op.
  std::optional<double> stream_ratio, copy_ratio, onednn_ratio;
  int bench_shapes = 0;
  std::string speed;                   // one line
};

// The verdict of every kernel of data.accuracy, in the same order.
std::vector<KernelVerdict> verdicts(const ReportData& data);

// Whether the run is a failure (exit 1 without a baseline): a kernel of ours
// failed, or a control was not caught. Third-party failures are findings about
// those libraries, reported in full, like a REFUTED claim.
bool run_failed(const std::vector<KernelVerdict>& v);

// "8 families, d = 5, 64, 768, 2 rows each, eps 1e-5 and 0": the workload in words.
std::string workload_text(const ReportData& data);

// "1.23e-04", "0", "inf": the figures in prose and tables.
std::string figure(double v);

// The fuzz campaign in one sentence ("16 generated problems per kernel, seed
// S, 4 findings in 19 s"), or "" when it was left out.
std::string fuzz_summary(const ReportData& data);

// A finding's problem in words and the command that replays it from the
// report's folder: "1 x 3" and "normcheck check --input findings/F --kernel K",
// its words shell-quoted when they need it (shell_quote.h).
std::string finding_shape(const fuzz::Finding& f);
// Its input class in words ("|mean|/sigma 10-1e3"; "when the library loads" for a library's loading).
std::string finding_class_text(const fuzz::Finding& f);
std::string replay_command(const fuzz::Finding& f);

// A speed ratio in a table: "1.23x" ("0.012x" below 0.1, so that small
// ratios keep two digits), `missing` when there is none.
std::string ratio_text(const std::optional<double>& ratio, const char* missing);

// A row in words: "huge, d = 768, eps = 1e-05, |mean|/sigma = 3.1, max|x| = 1e+30".
std::string describe(const RowResult& row);

}  // namespace normcheck::report
