// Google Benchmark over the kernel table, for finer work than `normcheck bench`
// (its filters, repetitions, statistics and counters). Same kernels, shapes,
// workload and byte counts as the subcommand (tools/bench/), plus the copy
// bandwidth as its own benchmark, and the throughput of verification
// (verify_throughput.cpp). Examples:
//   normcheck_gbench --benchmark_filter='layernorm_fwd.*/4096x4096' --benchmark_repetitions=5
//   normcheck_gbench --benchmark_filter='^verify/'
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "copy_bandwidth.h"
#include "isolation_throughput.h"
#include "measure.h"
#include "verify_throughput.h"
#include "workload.h"

namespace {

using normcheck::Kernel;
using normcheck::bench::BenchShape;
using normcheck::bench::Workload;

// Benchmarks run in registration order, grouped by shape, so one workload (the
// current shape's) is alive at a time.
Workload& workload_for(BenchShape shape) {
  static std::unique_ptr<Workload> current;
  if (!current || !(current->shape() == shape)) {
    current.reset();  // free the previous shape's arrays first
    current = std::make_unique<Workload>(shape, /*affine_forward=*/false);
  }
  return *current;
}

void run_kernel(benchmark::State& state, const Kernel* kernel, BenchShape shape) {
  Workload& workload = workload_for(shape);
  const std::string reason = normcheck::declines(*kernel, {workload.problem_shape(*kernel)});
  if (!reason.empty()) {
    state.SkipWithError(("declined: " + reason).c_str());
    return;
  }
  // One untimed call first, as `normcheck bench` makes: the first call of a
  // 16-bit row converts the workload's inputs (Workload::inputs16), which
  // would otherwise be timed as one slow iteration.
  workload.run(*kernel);
  for (auto _ : state) workload.run(*kernel);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(normcheck::bench::bytes_moved(*kernel, shape)));
}

void run_copy(benchmark::State& state) {
  static normcheck::bench::CopyBandwidth copy(std::size_t{128} << 20);
  for (auto _ : state) copy.measure_gbps();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 *
                          static_cast<int64_t>(copy.buffer_bytes()));
  state.counters["threads"] = copy.threads();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("copy", run_copy)->UseRealTime();
  for (const BenchShape& shape : normcheck::bench::standard_shapes())
    for (const Kernel& kernel : normcheck::kernel_table()) {
      const std::string name = std::string(kernel.name) + "/" + std::to_string(shape.rows) + "x" +
                               std::to_string(shape.cols);
      // Real time: threaded kernels' CPU time would hide their parallel speed-up.
      benchmark::RegisterBenchmark(name.c_str(), run_kernel, &kernel, shape)->UseRealTime();
    }
  normcheck::bench::register_verify_benchmarks();
  normcheck::bench::register_isolation_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
