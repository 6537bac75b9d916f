#include "measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "normcheck/op_spec.h"
#include "simd/thread_pool.h"

namespace normcheck::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_for(Workload& workload, const Kernel& kernel, long calls) {
  const auto begin = Clock::now();
  for (long i = 0; i < calls; ++i) workload.run(kernel);
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

BenchReport::Limit summary(const std::vector<double>& samples) {
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  return {median(samples), *low, *high};
}

struct Timing {
  const Kernel* kernel;
  long calls_per_sample;
  std::vector<double> seconds_per_call;
};

// The limits sampled once per round, and their samples.
struct Limits {
  CopyBandwidth copy;
  StreamLimit stream_fwd, stream_bwd, stream_add;
  std::vector<double> copy_samples, fwd_samples, bwd_samples, add_samples;
  explicit Limits(std::size_t bytes)
      : copy(bytes), stream_fwd(1, 1, bytes), stream_bwd(2, 1, bytes), stream_add(2, 2, bytes) {}
  void sample() {
    copy_samples.push_back(copy.measure_gbps());
    fwd_samples.push_back(stream_fwd.measure_gbps());
    bwd_samples.push_back(stream_bwd.measure_gbps());
    add_samples.push_back(stream_add.measure_gbps());
  }
};

// Times every accepted kernel on one shape, interleaved; adds a sample of
// each limit every round.
void measure_shape(const BenchOptions& options, BenchShape shape, Limits& limits,
                   BenchReport& report) {
  Workload workload(shape, options.affine_forward);
  std::vector<Timing> timings;
  for (const Kernel* kernel : options.kernels) {
    std::string reason = declines(*kernel, {workload.problem_shape(*kernel)});
    if (!reason.empty()) {
      report.declined.push_back({kernel, shape, std::move(reason)});
      continue;
    }
    workload.run(*kernel);  // warm-up: first touch of outputs, primitive creation, pools
    const double one_call = seconds_for(workload, *kernel, 1);
    const long calls =
        std::max(1L, std::lround(std::ceil(options.min_sample_seconds / std::max(one_call, 1e-9))));
    timings.push_back({kernel, calls, {}});
  }
  for (int round = 0; round < options.repeats; ++round) {
    limits.sample();
    for (std::size_t i = 0; i < timings.size(); ++i) {
      Timing& t = timings[(i + static_cast<std::size_t>(round)) % timings.size()];
      t.seconds_per_call.push_back(seconds_for(workload, *t.kernel, t.calls_per_sample) /
                                   static_cast<double>(t.calls_per_sample));
    }
  }
  for (const Timing& t : timings) {
    BenchResult r;
    r.kernel = t.kernel;
    r.shape = shape;
    r.seconds_per_call = median(t.seconds_per_call);
    const double bytes = bytes_moved(*t.kernel, shape);
    r.gbps = bytes / r.seconds_per_call * 1e-9;
    const auto [fastest, slowest] =
        std::minmax_element(t.seconds_per_call.begin(), t.seconds_per_call.end());
    r.gbps_min = bytes / *slowest * 1e-9;
    r.gbps_max = bytes / *fastest * 1e-9;
    r.calls_per_sample = t.calls_per_sample;
    r.samples = static_cast<int>(t.seconds_per_call.size());
    report.results.push_back(r);
  }
}

}  // namespace

std::vector<BenchShape> standard_shapes() {
  return {{1, 768}, {64, 768}, {4096, 1024}, {4096, 4096}, {256, 65536}};
}

std::string_view stream_limit_name(const Kernel& kernel) {
  if (spec_of(kernel).add) return "stream_add_gbps";
  return is_backward(kernel.op) ? "stream_bwd_gbps" : "stream_fwd_gbps";
}

const BenchReport::Limit& stream_limit_of(const BenchReport& report, const Kernel& kernel) {
  if (spec_of(kernel).add) return report.stream_add;
  return is_backward(kernel.op) ? report.stream_bwd : report.stream_fwd;
}

const Kernel* onednn_peer(const Kernel& kernel) {
  for (const Kernel& candidate : kernel_table())
    if (candidate.family == Family::onednn && candidate.op == kernel.op &&
        candidate.dtype == kernel.dtype)
      return &candidate;
  return nullptr;
}

BenchReport run_bench(const BenchOptions& options, void (*progress)(const std::string& line)) {
  BenchReport report;
  Limits limits(options.copy_buffer_bytes);
  report.copy_threads = limits.copy.threads();
  report.copy_buffer_bytes = limits.copy.buffer_bytes();
  report.stream_threads = limits.stream_fwd.threads();
  report.kernel_threads = simd::thread_count();
  report.cache_bytes = last_level_cache_bytes();
  limits.sample();  // warm-up, not counted
  limits.copy_samples.clear();
  limits.fwd_samples.clear();
  limits.bwd_samples.clear();
  limits.add_samples.clear();
  for (const BenchShape& shape : options.shapes) {
    if (progress)
      progress("bench: " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols));
    measure_shape(options, shape, limits, report);
  }
  if (!limits.copy_samples.empty()) {
    report.copy_gbps = median(limits.copy_samples);
    const auto [low, high] =
        std::minmax_element(limits.copy_samples.begin(), limits.copy_samples.end());
    report.copy_gbps_min = *low;
    report.copy_gbps_max = *high;
    report.stream_fwd = summary(limits.fwd_samples);
    report.stream_bwd = summary(limits.bwd_samples);
    report.stream_add = summary(limits.add_samples);
  }
  for (BenchResult& r : report.results) {
    r.ratio_to_copy = report.copy_gbps > 0 ? r.gbps / report.copy_gbps : 0;
    const double limit = stream_limit_of(report, *r.kernel).gbps;
    r.ratio_to_stream = limit > 0 ? r.gbps / limit : 0;
    r.out_of_cache = out_of_cache(*r.kernel, r.shape, report.cache_bytes);
    const Kernel* peer = onednn_peer(*r.kernel);
    const auto peer_result = std::find_if(
        report.results.begin(), report.results.end(),
        [&](const BenchResult& other) { return other.kernel == peer && other.shape == r.shape; });
    if (peer && peer_result != report.results.end()) r.ratio_to_onednn = r.gbps / peer_result->gbps;
  }
  return report;
}

}  // namespace normcheck::bench
