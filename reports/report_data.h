// Everything one `normcheck report` run found, in memory: what the writers
// (JSON, Markdown, HTML, JUnit, the baseline) turn into files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accuracy.h"
#include "measure.h"
#include "normcheck/claims.h"

namespace normcheck::report {

struct ClaimRun {
  const Claim* claim = nullptr;
  ClaimResult result;
  double seconds = 0;
};

struct ReportData {
  uint64_t seed = 0;
  bool quick = false;
  std::string started_utc;     // ISO 8601
  double seconds = 0;          // wall time of the whole run
  std::string simd_target;     // Highway's target the SIMD kernels ran on
  AccuracyOptions accuracy_options;
  std::vector<KernelAccuracy> accuracy;  // one per kernel, table order
  std::vector<ClaimRun> claims;
  std::optional<bench::BenchReport> bench;  // absent with --no-bench
  double accuracy_seconds = 0, claims_seconds = 0, bench_seconds = 0;
};

}  // namespace normcheck::report
