// `normcheck bench`: throughput of the table's kernels on the standard shapes,
// forward and backward, f32 and the 16-bit kernels, next to the streaming
// limit of each direction (tools/bench/stream_limit.h) and a STREAM-like copy
// on every core, measured in the same run, as ratios to them and to oneDNN. Figures are medians of interleaved samples (see
// tools/bench/measure.h); docs/performance.md quotes them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_json.h"
#include "bench_quick.h"
#include "command.h"
#include "measure.h"
#include "normcheck/kernel.h"

namespace normcheck::cli {
namespace {

using bench::BenchOptions;
using bench::BenchReport;
using bench::BenchShape;

struct BenchArgs {
  bool json = false;
  bool quick = false;
  bool affine = false;
  std::vector<std::string> kernels;
  std::vector<std::string> shapes;
  double seconds = 0;  // 0: the mode's default
  int repeats = 0;     // 0: the mode's default
};

// --shape's value, or a UsageError quoting it.
BenchShape shape_option(const std::string& text) {
  if (const auto shape = bench::parse_shape(text)) return *shape;
  throw UsageError("--shape wants ROWSxCOLS with positive sizes, e.g. 4096x1024; got '" + text + "'");
}

// The kernels asked for (all of the table by default), each followed by its
// oneDNN peer when that was not asked for itself, so ratio_to_onednn exists.
std::vector<const Kernel*> select_kernels(const std::vector<std::string>& names) {
  std::vector<const Kernel*> selected;
  if (names.empty()) {
    for (const Kernel& k : kernel_table()) selected.push_back(&k);
    return selected;
  }
  auto add = [&](const Kernel* k) {
    if (k && std::find(selected.begin(), selected.end(), k) == selected.end()) selected.push_back(k);
  };
  for (const std::string& name : names) {
    const Kernel* k = find_kernel(name);
    if (!k) throw UsageError("unknown kernel '" + name + "' (see `normcheck list`)");
    add(k);
  }
  for (const std::string& name : names) add(bench::onednn_peer(*find_kernel(name)));
  return selected;
}

BenchOptions options_from(const BenchArgs& args) {
  BenchOptions options;
  options.kernels = select_kernels(args.kernels);
  options.affine_forward = args.affine;
  if (args.quick) {
    use_quick_bench_workload(options);
  } else {
    options.shapes = bench::standard_shapes();
  }
  if (!args.shapes.empty()) {
    options.shapes.clear();
    for (const std::string& text : args.shapes) options.shapes.push_back(shape_option(text));
  }
  if (args.seconds > 0) options.min_sample_seconds = args.seconds;
  if (args.repeats > 0) options.repeats = args.repeats;
  return options;
}

// An environment variable a figure is quoted with, or "(unset)": the OpenMP
// settings oneDNN and libtorch run under (on a loaded machine their
// small-shape latency depends on the wait policy by orders of magnitude,
// docs/performance.md) and NORMCHECK_THREADS, our kernels' pool.
std::string env_setting(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "(unset)";
}

std::string shape_text(BenchShape shape) {
  return std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
}

nlohmann::json report_json(const BenchOptions& options, const BenchReport& report) {
  nlohmann::json doc = bench_report_json(report);
  doc["repeats"] = options.repeats;
  doc["min_sample_seconds"] = options.min_sample_seconds;
  doc["affine_forward"] = options.affine_forward;
  doc["environment"] = {{"OMP_NUM_THREADS", env_setting("OMP_NUM_THREADS")},
                        {"OMP_WAIT_POLICY", env_setting("OMP_WAIT_POLICY")},
                        {"NORMCHECK_THREADS", env_setting("NORMCHECK_THREADS")}};
  return doc;
}

void print_table(const BenchReport& report) {
  std::printf("%-34s %-9s %-3s %-5s %-11s %9s %11s %8s %7s %8s\n", "kernel", "op", "dir",
              "dtype", "shape", "GB/s", "us/call", "x stream", "x copy", "x oneDNN");
  for (const auto& r : report.results) {
    const std::string name(r.kernel->name), op(bench::op_family(r.kernel->op));
    char onednn[16] = "-";
    if (r.ratio_to_onednn) std::snprintf(onednn, sizeof onednn, "%.3f", *r.ratio_to_onednn);
    std::printf("%-34s %-9s %-3s %-5s %-11s %9.2f %11.2f %8.3f %7.3f %8s\n", name.c_str(),
                op.c_str(), std::string(bench::direction(r.kernel->op)).c_str(),
                std::string(to_string(r.kernel->dtype)).c_str(), shape_text(r.shape).c_str(),
                r.gbps, r.seconds_per_call * 1e6, r.ratio_to_stream, r.ratio_to_copy, onednn);
  }
  std::printf("\ncopy: %.2f GB/s (median; min %.2f, max %.2f), %u threads, 2 x %zu MiB, "
              "bytes read + written\n",
              report.copy_gbps, report.copy_gbps_min, report.copy_gbps_max, report.copy_threads,
              report.copy_buffer_bytes >> 20);
  std::printf("stream limit (read the inputs, write the outputs with non-temporal stores): "
              "forward %.2f GB/s (min %.2f, max %.2f), backward %.2f GB/s (min %.2f, max %.2f), "
              "residual add %.2f GB/s (min %.2f, max %.2f), %u threads\n",
              report.stream_fwd.gbps, report.stream_fwd.gbps_min, report.stream_fwd.gbps_max,
              report.stream_bwd.gbps, report.stream_bwd.gbps_min, report.stream_bwd.gbps_max,
              report.stream_add.gbps, report.stream_add.gbps_min, report.stream_add.gbps_max,
              report.stream_threads);
  std::printf("our kernels: %d threads (NORMCHECK_THREADS=%s)\n", report.kernel_threads,
              env_setting("NORMCHECK_THREADS").c_str());
  std::printf("bytes counted: forward 2 arrays (x, y), backward 3 (dy, x, dx), residual add 4 (x, residual, "
              "residual_out, y), of the kernel's dtype; x stream: to the limit that moves the same arrays\n");
  std::printf("OpenMP (oneDNN, libtorch): OMP_NUM_THREADS=%s OMP_WAIT_POLICY=%s\n",
              env_setting("OMP_NUM_THREADS").c_str(), env_setting("OMP_WAIT_POLICY").c_str());
  for (const auto& d : report.declined)
    std::printf("declined: %s on %s: %s\n", std::string(d.kernel->name).c_str(),
                shape_text(d.shape).c_str(), d.reason.c_str());
}

void progress_to_terminal(const std::string& line) { std::cerr << line << "\n"; }

int run_bench(const BenchArgs& args) {
  const BenchOptions options = options_from(args);
  const BenchReport report =
      bench::run_bench(options, isatty(STDERR_FILENO) ? &progress_to_terminal : nullptr);
  if (args.json)
    std::cout << report_json(options, report).dump(2) << "\n";
  else
    print_table(report);
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand(
      "bench", "Throughput of each kernel next to the memory-bandwidth limit, as ratios");
  auto args = std::make_shared<BenchArgs>();
  sub->add_flag("--json", args->json, "Print one JSON document");
  sub->add_flag("--quick", args->quick,
                "Small shapes and short samples (seconds in total); for tests, not for quoting");
  sub->add_flag("--affine", args->affine, "Give forward kernels gamma and beta (default: none)");
  sub->add_option("--kernel", args->kernels,
                  "Measure only this kernel (repeatable); its oneDNN peer is added for the ratio");
  sub->add_option("--shape", args->shapes, "ROWSxCOLS instead of the standard shapes (repeatable)");
  sub->add_option("--seconds", args->seconds,
                  "Minimum length of one timing sample, in seconds (default 0.02; --quick 0.002)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--repeats", args->repeats,
                  "Samples per kernel and shape; the median is reported (default 7; --quick 3)")
      ->check(CLI::PositiveNumber);
  sub->callback([&action, args] { action = [args] { return run_bench(*args); }; });
}

}  // namespace normcheck::cli
