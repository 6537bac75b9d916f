// Throughput of the table's kernels, side by side with the memory-bandwidth
// limit measured in the same run. The machine may be shared and noisy, so every
// figure is the median of several samples, and the samples are interleaved:
// each round times every kernel on a shape once (starting at a different kernel
// each round) plus one copy and one pass of each streaming limit
// (stream_limit.h), so a burst of load hits all of them alike.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache_size.h"
#include "copy_bandwidth.h"
#include "stream_limit.h"
#include "normcheck/kernel.h"
#include "workload.h"

namespace normcheck::bench {

// M x d = 1x768 (one token), 64x768 (a short sequence), 4096x1024, 4096x4096
// (a large batch, memory-bound), 256x65536 (long rows, split over threads).
std::vector<BenchShape> standard_shapes();

// The oneDNN row of the table with `kernel`'s op and dtype (its own row if it
// is one), or nullptr: what ratio_to_onednn divides by.
const Kernel* onednn_peer(const Kernel& kernel);

struct BenchOptions {
  std::vector<const Kernel*> kernels;  // measured in this order
  std::vector<BenchShape> shapes;
  int repeats = 7;                     // samples per (kernel, shape); the median is reported
  double min_sample_seconds = 0.02;    // a sample repeats calls until it lasts this long
  std::size_t copy_buffer_bytes = std::size_t{128} << 20;  // 4x this machine's 32 MiB L3
  bool affine_forward = false;         // forward kernels get gamma and beta
};

struct BenchResult {
  const Kernel* kernel = nullptr;
  BenchShape shape;
  double seconds_per_call = 0;  // median over the samples
  double gbps = 0;              // bytes_moved / seconds_per_call, 1e9 bytes per second
  double gbps_min = 0, gbps_max = 0;
  double ratio_to_copy = 0;
  // gbps / the streaming limit of the kernel's direction: the fraction of
  // possible on shapes whose arrays do not fit the cache (above 1 when they do).
  double ratio_to_stream = 0;
  std::optional<double> ratio_to_onednn;  // absent without a oneDNN peer measured on the shape
  // bytes_moved(kernel, shape) at least twice BenchReport::cache_bytes
  // (cache_size.h): the figures are memory's, not the cache's.
  bool out_of_cache = false;
  long calls_per_sample = 1;
  int samples = 0;
};

struct BenchDecline {
  const Kernel* kernel = nullptr;
  BenchShape shape;
  std::string reason;
};

struct BenchReport {
  double copy_gbps = 0;  // median of the copy samples taken between the kernel rounds
  double copy_gbps_min = 0, copy_gbps_max = 0;
  unsigned copy_threads = 0;
  std::size_t copy_buffer_bytes = 0;
  // The streaming limits (stream_limit.h), medians of the samples taken
  // between the kernel rounds, on arrays of copy_buffer_bytes each.
  struct Limit {
    double gbps = 0, gbps_min = 0, gbps_max = 0;
  };
  Limit stream_fwd, stream_bwd, stream_add;
  // The limits run one thread per core whatever the kernels are given, so a
  // ratio is the fraction of the machine; kernel_threads is our SIMD kernels'
  // pool (simd::thread_count(): NORMCHECK_THREADS, else one per core).
  unsigned stream_threads = 0;
  int kernel_threads = 0;
  std::size_t cache_bytes = 0;  // the last-level cache (last_level_cache_bytes()), 0: not known
  std::vector<BenchResult> results;
  std::vector<BenchDecline> declined;
};

// The streaming limit a kernel's ratio_to_stream divides by: the one that
// moves the arrays it moves (stream_limit.h), by the name of its JSON field:
// "stream_add_gbps" for a forward whose spec adds a residual,
// "stream_bwd_gbps" for a backward, "stream_fwd_gbps" for the others.
std::string_view stream_limit_name(const Kernel& kernel);
const BenchReport::Limit& stream_limit_of(const BenchReport& report, const Kernel& kernel);

// `progress`, when set, is called with a line of text before each shape.
BenchReport run_bench(const BenchOptions& options,
                      void (*progress)(const std::string& line) = nullptr);

}  // namespace normcheck::bench
