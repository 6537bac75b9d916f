// The verdict per kernel a user acts on: its grade (grade.h) and the bound it
// is held to, on which inputs to trust it, what it declines, why it fails
// where it does, and how fast it is next to the memory limit and oneDNN on
// shapes out of cache. Markdown, HTML, JSON and JUnit all print these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grade.h"
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
  Grade grade = Grade::declined;
  std::string bound;                   // the bound it is held to, in words (bound_text)
  // A forward norm's two verdicts: against its rounding policy (its spec,
  // op_spec.h: what the grade judges) and against exact math. `policy` is the
  // spec's text, `policy_name` the projects that ship that policy (empty if
  // none is known); the figures are y's worst distance from exact math in
  // ULPs of y's format (scaled, metrics.h) over the rows run, of the kernel and
  // of its policy's own correctly rounded result. Empty and absent for the
  // other ops.
  std::string policy, policy_name;
  std::optional<double> exact_math_ulp, policy_exact_math_ulp;
  // A forward whose y is quantized (op_spec.h, Quantization): the two figures
  // above are distances in codes, not ULPs; `scale_ratio` is a dynamic
  // scale's worst error over its range's reach (below 1 inside it).
  bool quantized = false;
  std::optional<double> scale_ratio;
  // A third party whose algorithm a kernel of ours reimplements
  // (reimplementation_of): that kernel, and the worst error over its bound
  // on the rows run and how many rows break it.
  const Kernel* reimplementation = nullptr;
  double algorithm_worst = 0;
  int64_t algorithm_rows_failed = 0;
  // The worst error/bound on the realistic rows its fuzz findings' severities
  // measured (+inf: NaN/inf where the exact result is finite); absent when
  // no finding has a severity.
  std::optional<double> realistic_worst;
  std::string advice;                  // a few words for the verdict table
  std::string headline;                // one sentence: trust on which inputs
  std::vector<std::string> notes;      // why it fails, what it declines, ULP read right
  std::vector<Count> failing_families; // family: failed rows
  // Of those, the rows with NaN/inf where the exact result is finite (or the
  // reverse), by family and eps ("constant_one_ulp, eps = 0": rows).
  std::vector<Count> nonfinite_families;
  std::vector<Count> decline_reasons;  // reason: declined rows
  double worst_ratio = 0;              // max error/bound over the rows run
  double worst_finite_ratio = 0;       // the same over the rows without a NaN/inf mismatch
  double max_ulp = 0;
  std::string worst_output;
  const RowResult* worst_row = nullptr;
  std::vector<const fuzz::Finding*> fuzz_findings;  // the fuzz campaign's, into data.fuzz
  // Medians of throughput / the streaming limit of the kernel's direction,
  // / a copy, and / oneDNN's kernel for the same op, over the bench shapes
  // out of cache (bench::out_of_cache), or over every shape measured when
  // none is (speed_in_cache then).
  std::optional<double> stream_ratio, copy_ratio, onednn_ratio;
  int bench_shapes = 0;                // the shapes the medians are over
  bool speed_in_cache = false;         // no shape was out of cache: the medians are in-cache figures
  std::string speed;                   // one line, naming the shapes and the criterion
};

// The grade of a verdict (grade.h) from its counts, its kernel's origin, its
// fuzz findings' labels and severities' labels, and realistic_worst.
Grade grade_of(const KernelVerdict& v);

// The bound a kernel is held to, in words: "the default bound (what a careful
// float32 two-pass kernel meets, ...)" for a kernel held to default_bound(),
// its 16-bit form for a plugin's bf16/f16 backward, else its algorithm's own.
std::string bound_text(const Kernel& k);

// The verdict of every kernel of data.accuracy, in the same order.
std::vector<KernelVerdict> verdicts(const ReportData& data);

// Whether the run is a failure (exit 1 without a baseline): a kernel of ours
// is graded below trusted, or a control was not caught. A third party's or a
// plugin's grade is a finding about that library, reported in full, like a
// REFUTED claim.
bool run_failed(const std::vector<KernelVerdict>& v);

// "8 families, d = 5, 64, 768, 2 rows each, eps 1e-5 and 0": the workload in
// words (for judged kernels, ReportData::judged).
std::string workload_text(const ReportData& data);
// "Quick workload", "Default workload", or "Judged problems" (ReportData::judged).
std::string workload_name(const ReportData& data);
// What the kernels ran on, in a sentence: "Every kernel of the table ran on
// rows of the adversarial families (...)." or, judged, "The kernels were
// judged on problems of their own: ...".
std::string workload_sentence(const ReportData& data);

// A verdict's worst element in words: output, row, column, value and exact
// value (the middle of the admissible range) as hex floats, the allowance:
// "y[row 0, col 1] = -0x1.4ep-15, exact -0x1.4eca267116703p-15, allowed error 1.19e-07".
std::string worst_text(const Worst& w);

// "1.23e-04", "0", "inf": the figures in prose and tables.
std::string figure(double v);

// Which bench shapes the speed columns are medians over, in one sentence
// ("2 of the 5 bench shapes are out of cache (4096x4096, 256x65536: bytes
// moved per call >= 2x the 32 MiB last-level cache); the speed columns are
// medians over those."), or "" without the bench.
std::string speed_scope(const ReportData& data);

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
