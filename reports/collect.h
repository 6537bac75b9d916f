// One report run: the accuracy workload, the claims and the bench, with
// progress on stderr. What the writers then turn into files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "report_data.h"

namespace normcheck::report {

struct RunOptions {
  bool quick = false;
  uint64_t seed = 0;
  bool bench = true;   // --no-bench leaves the bench out
  bool claims = true;  // --no-claims leaves the claims out
  // Cases per kernel of the fuzz campaign (0 leaves it out), and the folder
  // its findings are saved to (made when there is one).
  int64_t fuzz_cases = 0;
  std::filesystem::path fuzz_dir;
  std::vector<const Kernel*> kernels;  // the accuracy workload's kernels (the whole table by default)
};

ReportData collect(const RunOptions& options);

// The time now in ISO 8601, UTC ("2026-11-27T09:30:00Z"): ReportData::started_utc.
std::string utc_now();

// The bench options of a report run: `normcheck bench --quick`'s shapes and
// sample counts for --quick, the standard shapes with fewer samples otherwise.
bench::BenchOptions report_bench_options(bool quick);

}  // namespace normcheck::report
