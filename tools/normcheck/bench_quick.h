// The quick benchmark workload of `normcheck bench --quick` and `normcheck
// report --quick`: seconds in total, for smoke tests and the CLI tests. Small
// shapes, few short samples, a copy buffer that stays within the L3 cache:
// ratios for a smoke test, not figures to quote.
#pragma once

#include <cstddef>

#include "measure.h"

namespace normcheck::cli {

inline void use_quick_bench_workload(bench::BenchOptions& options) {
  options.shapes = {{1, 768}, {64, 768}, {256, 1024}};
  options.repeats = 3;
  options.min_sample_seconds = 0.002;
  options.copy_buffer_bytes = std::size_t{16} << 20;
}

}  // namespace normcheck::cli
