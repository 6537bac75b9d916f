// The accuracy baseline, in the spirit of glibc's libm-test-ulps: a checked-in
// text table of the worst error per kernel x op x output on a fixed workload
// (the quick one with a fixed seed). A run checked against it fails when a
// kernel got worse; --update-baseline rewrites it.
//
// The file, one entry per line ('#' starts a comment):
//   # workload quick seed 20261121 simd_target AVX2
//   layernorm_fwd.twopass layernorm_fwd y 0.0123 1993000000
// columns: kernel, op, output, max error/bound, max ULP (main outputs; 0 for
// mean/rstd), printed with 17 significant digits so a run of the same build on
// the same workload reproduces them exactly.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report_data.h"

namespace normcheck::report {

struct BaselineEntry {
  std::string kernel, op, output;
  double max_error_over_bound = 0, max_ulp = 0;
};

struct Baseline {
  bool quick = true;
  uint64_t seed = 0;
  std::string simd_target;
  std::vector<BaselineEntry> entries;
};

// The baseline of this run.
Baseline baseline_of(const ReportData& data);
std::string format_baseline(const Baseline& b);
// Throws normcheck::cli-free std::invalid_argument naming the file and line on
// a malformed file (the CLI turns it into exit 2).
Baseline parse_baseline(const std::string& text, const std::string& file_name);
Baseline read_baseline(const std::filesystem::path& path);

// One kernel x op x output that got worse than the baseline.
struct Regression {
  std::string kernel, op, output;
  std::string metric;       // "error/bound" or "ULP"
  double before = 0, after = 0;
  std::string input;        // the row where `after` was seen, in words
};

struct BaselineCheck {
  std::vector<Regression> regressions;
  std::vector<std::string> notes;  // kernels missing from either side, a different SIMD target
};

// Compares the run with the baseline. Any increase counts: the workload is
// deterministic (fixed seed; our kernels split a batch's rows by its shape,
// never by the thread count), so the same build on the same SIMD target and
// thread count reproduces every figure exactly, and a larger one means the
// kernel's numerics changed on that input. (oneDNN's and libtorch's sums over
// a batch's rows follow their thread count.)
BaselineCheck check_baseline(const ReportData& data, const Baseline& baseline);
std::string format_check(const BaselineCheck& check, const std::string& file_name);

}  // namespace normcheck::report
