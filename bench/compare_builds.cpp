// How much faster or slower a change makes a kernel: this build's kernels
// against a baseline build of libnormcheck_kernels.so (e.g. main's), both in
// one process, on the same arrays, alternating. The baseline is loaded with
// dlmopen into a link namespace of its own (its own copies of Highway and the
// C++ runtime, its own thread pool), so both builds keep every symbol they
// were built with. Each round times a sample of back-to-back calls of each
// build, the order swapped every round (A B, B A, ...) so that a drift of the
// machine's load between the two samples cancels over rounds; the figure is
// the median over rounds of the per-round ratio, with its quartiles. On this
// shared 2-core machine a build against itself gave medians of 0.96 to 1.06
// (35 of 40 kernel-shape rows within 0.97 to 1.03), where runs of
// normcheck_gbench alternated process by process spread by 0.73 to 1.31 on
// the same day (docs/performance.md, "Comparing two builds").
//   normcheck_compare_builds --baseline LIB [--rounds R] [--seconds S]
//                            [--shape ROWSxCOLS ...] KERNEL...
// Shapes default to `normcheck bench`'s standard ones. Both builds must share
// KernelArgs (normcheck/invoke.h) and the Kernel row (normcheck/kernel.h): the
// arguments cross from one to the other as they are. NORMCHECK_THREADS sets
// both pools. Bad arguments exit 2.
#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "measure.h"
#include "normcheck/invoke.h"
#include "normcheck/kernel.h"
#include "workload.h"

namespace {

using normcheck::Kernel;
using normcheck::KernelArgs;
using normcheck::bench::BenchShape;
using normcheck::bench::Workload;

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr,
               "%s\nusage: normcheck_compare_builds --baseline LIB [--rounds R] [--seconds S] "
               "[--shape ROWSxCOLS ...] KERNEL...\n",
               message.c_str());
  std::exit(2);
}

// The two entry points a build is called through, as that build defines them.
struct Build {
  const Kernel* (*find)(std::string_view name);
  void (*invoke)(const Kernel& kernel, const KernelArgs& args);
};

Build this_build() { return {&normcheck::find_kernel, &normcheck::invoke}; }

// The build at `path`, in a link namespace of its own; exits 2 when it
// cannot be loaded or lacks the entry points (mangled as g++ and clang++
// mangle them on this ABI; normcheck_compare_builds is compiled with the same).
Build load_build(const std::string& path) {
  void* handle = dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) usage("cannot load the baseline: " + std::string(dlerror()));
  Build build{};
  build.find = reinterpret_cast<decltype(build.find)>(
      dlsym(handle, "_ZN9normcheck11find_kernelESt17basic_string_viewIcSt11char_traitsIcEE"));
  build.invoke = reinterpret_cast<decltype(build.invoke)>(
      dlsym(handle, "_ZN9normcheck6invokeERKNS_6KernelERKNS_10KernelArgsE"));
  if (!build.find || !build.invoke)
    usage(path + " does not define normcheck::find_kernel and normcheck::invoke");
  return build;
}

// Seconds per call over `calls` back-to-back calls.
double per_call(const Build& build, const Kernel& kernel, const KernelArgs& args, long calls) {
  const auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) build.invoke(kernel, args);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return wall / static_cast<double>(calls);
}

// The element of v nearest a fraction p of the way through it, sorted
// (p = 0.5: the median, the upper one of an even count).
double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  double seconds = 0.05;
  std::string baseline_path;
  std::vector<BenchShape> shapes;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--baseline" && has_value) {
      baseline_path = argv[++i];
    } else if (arg == "--rounds" && has_value) {
      const std::string_view text = argv[++i];
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rounds);
      if (error != std::errc() || end != text.data() + text.size() || rounds < 1)
        usage("--rounds wants a positive whole number");
    } else if (arg == "--seconds" && has_value) {
      const std::string_view text = argv[++i];
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
      if (error != std::errc() || end != text.data() + text.size() || !(seconds > 0))
        usage("--seconds wants a positive number");
    } else if (arg == "--shape" && has_value) {
      const auto shape = normcheck::bench::parse_shape(argv[++i]);
      if (!shape) usage("--shape wants ROWSxCOLS with positive sizes, e.g. 4096x1024");
      shapes.push_back(*shape);
    } else if (!arg.starts_with("--")) {
      names.emplace_back(arg);
    } else {
      usage("unknown option or missing value: " + std::string(arg));
    }
  }
  if (baseline_path.empty()) usage("--baseline LIB is required");
  if (names.empty()) usage("name at least one kernel");
  if (shapes.empty()) shapes = normcheck::bench::standard_shapes();
  const Build current = this_build(), baseline = load_build(baseline_path);
  std::vector<std::pair<const Kernel*, const Kernel*>> kernels;  // this build's, the baseline's
  for (const std::string& name : names) {
    const Kernel* k = current.find(name);
    const Kernel* base = baseline.find(name);
    if (!k) usage("this build has no kernel " + name);
    if (!base) usage("the baseline has no kernel " + name);
    kernels.emplace_back(k, base);
  }

  std::printf("this build against %s: %d rounds, samples of >= %g s, order swapped every round\n",
              baseline_path.c_str(), rounds, seconds);
  std::printf("%-28s %-11s %13s %13s %8s %15s\n", "kernel", "shape", "baseline us", "this us",
              "this/base", "quartiles");
  for (const BenchShape& shape : shapes) {
    Workload w(shape, /*affine_forward=*/false);
    for (const auto& [k, base] : kernels) {
      const std::string shape_name = std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
      if (const std::string why = normcheck::declines(*k, {w.problem_shape(*k)}); !why.empty()) {
        std::printf("%-28s %-11s declined: %s\n", std::string(k->name).c_str(), shape_name.c_str(),
                    why.c_str());
        continue;
      }
      const KernelArgs args = w.args(*k);  // both builds write the same outputs
      baseline.invoke(*base, args);        // first calls: page faults, pool start-up
      current.invoke(*k, args);
      const long calls =
          std::max(1L, static_cast<long>(seconds / std::max(per_call(current, *k, args, 1), 1e-9)));
      std::vector<double> base_times, times, ratios;
      for (int r = 0; r < rounds; ++r) {
        double base_time = 0, time = 0;
        if (r % 2 == 0) {
          base_time = per_call(baseline, *base, args, calls);
          time = per_call(current, *k, args, calls);
        } else {
          time = per_call(current, *k, args, calls);
          base_time = per_call(baseline, *base, args, calls);
        }
        base_times.push_back(base_time);
        times.push_back(time);
        ratios.push_back(time / base_time);
      }
      char quartiles[32];
      std::snprintf(quartiles, sizeof quartiles, "[%.3f, %.3f]", quantile(ratios, 0.25),
                    quantile(ratios, 0.75));
      std::printf("%-28s %-11s %13.2f %13.2f %8.3f %15s\n", std::string(k->name).c_str(),
                  shape_name.c_str(),
                  quantile(base_times, 0.5) * 1e6, quantile(times, 0.5) * 1e6,
                  quantile(ratios, 0.5), quartiles);
      std::fflush(stdout);
    }
  }
  return 0;
}
