// Where handing a kernel call to the thread pool starts to pay: times each
// kernel at 1 thread and at N threads (every core) on a grid of rows x cols,
// with the serial cut-off (min_parallel_elements) set to 0 so every call of N
// threads does go through the pool. The two thread counts alternate within
// each round, in one process, so a burst of load from elsewhere hits both
// alike; figures are medians over the rounds. The threshold printed for a
// kernel is the smallest element count from which N threads were faster on
// every larger shape of the grid; row_partition.h's kMinParallelElements
// quotes this program's figures. The last column, the 1-thread call's CPU
// time, is what the wall clock shows on a machine with a core to spare.
//   normcheck_parallel_threshold [--rounds R] [--seconds S] [KERNEL...]
// Default kernels: every kernel of ours in the Highway family, f32.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <time.h>
#include <vector>

#include "normcheck/kernel.h"
#include "simd/thread_pool.h"
#include "workload.h"

namespace {

using normcheck::Kernel;
using normcheck::bench::BenchShape;
using normcheck::bench::Workload;
namespace simd = normcheck::simd;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The calling thread's CPU time in seconds.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Seconds per call over a sample of `calls` back-to-back calls; `cpu`, when
// given, gets the calling thread's CPU seconds per call (on one thread, what
// the wall clock would show with a core to itself).
double per_call(Workload& w, const Kernel& k, long calls, double* cpu = nullptr) {
  const double cpu_begin = thread_cpu_seconds();
  const auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) w.run(k);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (cpu) *cpu = (thread_cpu_seconds() - cpu_begin) / static_cast<double>(calls);
  return wall / static_cast<double>(calls);
}

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr, "%s\nusage: normcheck_parallel_threshold [--rounds R] [--seconds S] [KERNEL...]\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9;
  double seconds = 0.01;
  std::vector<const Kernel*> kernels;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--rounds" || arg == "--seconds") && i + 1 < argc) {
      const double value = std::atof(argv[++i]);
      if (value <= 0) usage("--rounds and --seconds want a positive number");
      if (arg == "--rounds") {
        rounds = static_cast<int>(value);
      } else {
        seconds = value;
      }
    } else if (const Kernel* k = normcheck::find_kernel(arg)) {
      kernels.push_back(k);
    } else {
      usage(("unknown argument or kernel: " + std::string(arg)).c_str());
    }
  }
  if (kernels.empty())
    for (const Kernel& k : normcheck::kernel_table())
      if (k.origin == normcheck::Origin::ours && k.family == normcheck::Family::highway &&
          k.dtype == normcheck::DType::f32)
        kernels.push_back(&k);

  const int threads = simd::thread_count();
  if (threads < 2) usage("needs at least 2 threads (NORMCHECK_THREADS or the core count)");
  const std::vector<BenchShape> grid = {
      {1, 768},    {16, 768},   {32, 768},   {64, 768},  {128, 768},  {256, 768},
      {512, 768},  {1024, 768}, {2048, 768}, {8, 4096},  {32, 4096},  {128, 4096},
      {256, 4096}, {512, 4096}, {1, 65536},  {2, 65536}, {16, 65536}};
  const int64_t saved_cutoff = simd::min_parallel_elements();
  simd::set_min_parallel_elements(0);
  std::printf("threads 1 vs %d, %d rounds, samples of >= %g s, medians (us per call)\n", threads,
              rounds, seconds);
  std::printf("%-24s %-11s %10s %12s %12s %8s %12s\n", "kernel", "shape", "elements", "1 thread",
              "N threads", "N / 1", "1 thr. CPU");
  for (const Kernel* k : kernels) {
    std::vector<std::pair<int64_t, double>> ratios;  // elements, N-thread time / 1-thread time
    for (const BenchShape& shape : grid) {
      Workload w(shape, /*affine_forward=*/false);
      if (!normcheck::declines(*k, {w.problem_shape(*k)}).empty()) continue;
      simd::set_thread_count(1);
      w.run(*k);
      const long calls = std::max(1L, static_cast<long>(seconds / std::max(per_call(w, *k, 1), 1e-9)));
      std::vector<double> one, many, one_cpu;
      for (int r = 0; r < rounds; ++r) {
        simd::set_thread_count(1);
        w.run(*k);
        double cpu = 0;
        one.push_back(per_call(w, *k, calls, &cpu));
        one_cpu.push_back(cpu);
        simd::set_thread_count(threads);
        w.run(*k);
        many.push_back(per_call(w, *k, calls));
      }
      const double t1 = median(one), tn = median(many);
      const int64_t elements = shape.rows * shape.cols;
      ratios.push_back({elements, tn / t1});
      std::printf("%-24s %-11s %10lld %12.2f %12.2f %8.2f %12.2f\n", std::string(k->name).c_str(),
                  (std::to_string(shape.rows) + "x" + std::to_string(shape.cols)).c_str(),
                  static_cast<long long>(elements), t1 * 1e6, tn * 1e6, tn / t1,
                  median(one_cpu) * 1e6);
    }
    std::sort(ratios.begin(), ratios.end());
    int64_t threshold = -1;  // -1: N threads never faster on the largest shapes
    for (auto it = ratios.rbegin(); it != ratios.rend() && it->second < 1; ++it) threshold = it->first;
    if (threshold < 0)
      std::printf("%-24s threshold: above every shape of the grid\n\n", std::string(k->name).c_str());
    else
      std::printf("%-24s threshold: %lld elements (N threads faster from there up)\n\n",
                  std::string(k->name).c_str(), static_cast<long long>(threshold));
  }
  simd::set_min_parallel_elements(saved_cutoff);
  return 0;
}
