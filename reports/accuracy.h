// The accuracy part of `normcheck report`: every kernel of the table run by
// evaluate() on rows drawn from the adversarial row families
// (properties/row_families.h) at several lengths, one row per problem, so each
// row's error lands on its own |mean|/sigma; and every backward kernel on
// batches of many rows, where dgamma and dbeta are sums over the rows (on one
// row they are one term each).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::report {

struct AccuracyOptions {
  std::vector<int64_t> lengths;  // d of the rows
  int rows_per_family = 1;       // rows drawn per (family, d)
  uint64_t seed = 0;
  // Backward kernels also run on one batch of each of these row counts, of
  // d = batch_d, drawn as the fuzz campaign's many-rows problems
  // (props::draw_batch), with gamma; their family is "many_rows".
  std::vector<int64_t> batch_rows;
  int64_t batch_d = 64;
};

// The quick workload (CI, the baseline) and the default one.
AccuracyOptions quick_accuracy(uint64_t seed);
AccuracyOptions default_accuracy(uint64_t seed);

// One row of the workload, as run by one kernel.
struct RowResult {
  std::string family;        // the row family's name (row_families.h), or "many_rows" (a batch)
  int64_t d = 0;
  int index = 0;             // which draw of (family, d); of a problem of several rows, its worst row
  int64_t rows = 1;          // the problem's rows (a batch's many)
  float eps = 0;
  bool affine = false;       // gamma (and beta for the forward) given
  double mean_over_sigma = 0;// exact |mean| / sqrt(variance) of x (+inf for a constant row)
  double max_abs_x = 0;
  double rstd = 0;           // exact 1/sqrt(variance + eps) (rrms for RMSNorm)
  Evaluation evaluation;     // declined non-empty: nothing ran
  // A third party's kernel whose algorithm a kernel of ours reimplements
  // (reimplementation_of): its max error over that kernel's bound on the row
  // (+inf for a NaN/inf mismatch); absent otherwise, and on a declined row.
  std::optional<double> algorithm_ratio;
  // A problem judged outside the workload (judged_report.h) that broke its bound:
  // the finding's label, its problem file (relative to the report's folder)
  // and the command that replays it. Empty otherwise.
  std::string finding_label, problem_file, replay;
};

// The exact statistics of row `row` of p's x, which the plots' x axis is:
// |mean|/sigma (+inf for a constant row), max|x|, and rstd (rrms when `rms`).
// NaN for a row with a NaN or infinity in x.
struct RowFacts {
  double mean_over_sigma = 0, max_abs_x = 0, r = 0;
};
RowFacts row_facts(const Problem& p, int64_t row, bool rms);

struct KernelAccuracy {
  const Kernel* kernel = nullptr;
  std::vector<RowResult> rows;
};

// The worst of one output of one kernel over the workload: the baseline's entry.
struct OutputWorst {
  std::string output;
  double max_error_over_bound = 0;
  double max_ulp = 0;
  const RowResult* ratio_row = nullptr;  // the row of the worst ratio (nullptr: every ratio 0)
  const RowResult* ulp_row = nullptr;
};
std::vector<OutputWorst> output_worsts(const KernelAccuracy& k);

// Runs every kernel of `kernels`; `progress(done, total)` after each row.
std::vector<KernelAccuracy> run_accuracy(const std::vector<const Kernel*>& kernels,
                                         const AccuracyOptions& options,
                                         const std::function<void(int64_t, int64_t)>& progress);

// The number of evaluations run_accuracy will make (for progress and ETA).
int64_t accuracy_steps(const std::vector<const Kernel*>& kernels, const AccuracyOptions& options);

}  // namespace normcheck::report
