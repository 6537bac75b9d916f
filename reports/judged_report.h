// A report of kernels judged on problems of their own rather than on the
// report's workload: `normcheck judge`'s harness (outputs read from files),
// or a kernel judged from another caller (the Python module), each already
// run through evaluate(). Each problem becomes a row of its kernel's entry,
// each finding a note with its problem file; the writers of writers.h turn
// the data into the files `normcheck report` writes, the kernel a row like
// any other (its grade, its rounding policy's two verdicts, its notes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "report_data.h"

namespace normcheck::report {

// One problem a kernel was judged on.
struct JudgedProblem {
  std::string name;        // its name in the report (the rows' family column): "case-003"
  Problem problem;         // the inputs it was judged on
  Evaluation evaluation;   // evaluate(kernel, problem)
  // A finding (evaluation.pass false): its label (fuzz/isolation.h's
  // label_of), the problem saved as a problem file, as a path relative to
  // the report's folder ("findings/case-003.finding.txt"; the file is the
  // caller's to put there, write_report moves a folder of them in), and the
  // command that replays it. Empty when it passed.
  std::string label, problem_file, replay;
};

struct JudgedKernel {
  // Its row: name, op, dtype, origin, spec (the rounding policy it is held
  // to), bound and domain are what the report prints. It must outlive the
  // report's data; its function is not called.
  const Kernel* kernel = nullptr;
  std::vector<JudgedProblem> problems;
};

// The report's data for `kernels`, in this order: one RowResult per problem,
// its `index` the problem's worst row (Evaluation::worst), whose x's
// statistics it gives; `seed` the seed the problems were
// drawn with, `source` where they come from in words ("8 cases of runs/,
// written by normcheck gen and judged by normcheck judge"), said in place of
// the workload. No fuzz campaign, claims or bench.
ReportData judged_report_data(std::vector<JudgedKernel> kernels, uint64_t seed, std::string source);

}  // namespace normcheck::report
