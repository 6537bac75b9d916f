// Everything one `normcheck report` run found, in memory: what the writers
// (JSON, Markdown, HTML, JUnit, the baseline) turn into files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "campaign.h"
#include "measure.h"
#include "normcheck/claims.h"

namespace normcheck::report {

struct ClaimRun {
  const Claim* claim = nullptr;
  ClaimResult result;
  double seconds = 0;
};

// A short fuzz campaign over the same kernels (fuzz/campaign.h): the
// property suite's generators, each finding shrunk and saved as a problem file
// that `normcheck check --input FILE --kernel K` replays.
struct FuzzRun {
  int64_t cases_per_kernel = 0;
  fuzz::CampaignResult result;  // findings' files are in the report's findings/ folder
};

struct ReportData {
  uint64_t seed = 0;
  bool quick = false;
  std::string started_utc;     // ISO 8601
  double seconds = 0;          // wall time of the whole run
  std::string simd_target;     // Highway's target the SIMD kernels ran on
  AccuracyOptions accuracy_options;
  std::vector<KernelAccuracy> accuracy;  // one per kernel, table order
  std::optional<FuzzRun> fuzz;  // absent with --no-fuzz
  std::vector<ClaimRun> claims;
  std::optional<bench::BenchReport> bench;  // absent with --no-bench
  double accuracy_seconds = 0, fuzz_seconds = 0, claims_seconds = 0, bench_seconds = 0;
  // Non-empty: the kernels were judged on problems of their own
  // (judged_report.h), which this says in words; `quick` and the workload's
  // families then do not apply, and each row is one problem.
  std::string judged;
};

}  // namespace normcheck::report
