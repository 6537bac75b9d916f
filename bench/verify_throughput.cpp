// Throughput of verification: evaluate() (the kernel's run, the exact
// reference and the comparison, as `normcheck check` does it per problem) and
// the exact reference alone, on 2^18 elements in rows of d = 64, 1024, 4096
// and 16384. Counter `rows_per_second` counts verified rows. Rows: x ~ N(0, 1)
// per element (a fixed seed, so every run measures the same rows),
// gamma ~ 1 + N(0, 0.1^2), beta ~ N(0, 0.1^2), dy ~ N(0, 1), eps = 1e-5.
// `rows_per_cpu_second` divides by the CPU time of the whole process (every
// thread; getrusage): on a machine shared with other jobs it moves less than
// the wall-clock rate, and with T threads kept busy an idle machine's
// wall-clock rate approaches T times it.
//   normcheck_gbench --benchmark_filter='^verify/'
#include "verify_throughput.h"

#include <sys/resource.h>

#include <random>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "normcheck/evaluate.h"
#include "normcheck/huge_pages.h"
#include "normcheck/kernel.h"
#include "normcheck/reference.h"

namespace normcheck::bench {

Problem make_problem(int64_t rows, int64_t cols, bool backward) {
  std::mt19937_64 rng(20261124);
  std::normal_distribution<float> normal(0, 1);
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.x.resize(static_cast<std::size_t>(rows * cols));
  for (float& v : p.x) v = normal(rng);
  p.gamma.resize(static_cast<std::size_t>(cols));
  for (float& v : p.gamma) v = 1 + 0.1f * normal(rng);
  if (backward) {
    p.dy.resize(p.x.size());
    for (float& v : p.dy) v = normal(rng);
  } else {
    p.beta.resize(static_cast<std::size_t>(cols));
    for (float& v : p.beta) v = 0.1f * normal(rng);
  }
  return p;
}

namespace {

// CPU seconds used so far by every thread of the process.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// Runs work() once per iteration, then counts the rows verified per second
// and per CPU second; a work() that returns false (it reported an error)
// ends the run uncounted.
template <class Work>
void time_rows(benchmark::State& state, int64_t rows, Work work) {
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state)
    if (!work()) return;
  const double cpu_seconds = process_cpu_seconds() - cpu0;
  const double verified = static_cast<double>(rows) * static_cast<double>(state.iterations());
  state.counters["rows_per_second"] = benchmark::Counter(verified, benchmark::Counter::kIsRate);
  state.counters["rows_per_cpu_second"] = verified / cpu_seconds;
}

void run_evaluate(benchmark::State& state, const char* kernel_name, int64_t rows, int64_t cols) {
  const Kernel* kernel = find_kernel(kernel_name);
  if (!kernel) {
    state.SkipWithError((std::string("no kernel ") + kernel_name).c_str());
    return;
  }
  const bool backward = kernel->op == Op::layernorm_bwd || kernel->op == Op::rmsnorm_bwd;
  const Problem p = make_problem(rows, cols, backward);
  time_rows(state, rows, [&] {
    const Evaluation e = evaluate(*kernel, p);
    if (!e.pass) {
      state.SkipWithError("the kernel failed its check on the benchmark rows");
      return false;
    }
    benchmark::DoNotOptimize(e.max_ulp);
    return true;
  });
}

// The exact reference alone: the forward's y, or with `backward` the gradient.
void run_reference(benchmark::State& state, bool backward, int64_t rows, int64_t cols) {
  const Problem p = make_problem(rows, cols, backward);
  retain_freed_memory();  // the allocator's policy evaluate() runs under (huge_pages.h), whatever ran before
  time_rows(state, rows, [&] {
    if (backward)
      benchmark::DoNotOptimize(reference_layernorm_bwd(p.dy, p.x, p.gamma, rows, cols, p.eps).dx.exact.size());
    else
      benchmark::DoNotOptimize(reference_layernorm_fwd(p.x, p.gamma, p.beta, rows, cols, p.eps).y.exact.size());
    return true;
  });
}

}  // namespace

void register_verify_benchmarks() {
  // 2^18 elements at each width: evaluate() against its reference alone, by d.
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{4096, 64}, {256, 1024}, {64, 4096}, {16, 16384}}) {
    const std::string shape = "/" + std::to_string(rows) + "x" + std::to_string(cols);
    // Real time: evaluate() runs threaded kernels.
    benchmark::RegisterBenchmark(("verify/evaluate/layernorm_fwd.twopass" + shape).c_str(),
                                 run_evaluate, "layernorm_fwd.twopass", rows, cols)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("verify/evaluate/layernorm_bwd.twopass" + shape).c_str(),
                                 run_evaluate, "layernorm_bwd.twopass", rows, cols)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("verify/reference/layernorm_fwd" + shape).c_str(), run_reference, false, rows, cols)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("verify/reference/layernorm_bwd" + shape).c_str(), run_reference, true, rows, cols)
        ->UseRealTime();
  }
  // dgamma and dbeta over a real batch's rows (issue: 8k-64k rows): one
  // evaluate() of a 65536 x 4096 backward problem, about 12 GB (x, dy, the
  // kernel's guarded copies and dx, the reference's exact dx and xhat), run
  // once; its figure is the seconds one judgement takes.
  benchmark::RegisterBenchmark("verify/evaluate_batch/layernorm_bwd.twopass/65536x4096", run_evaluate,
                               "layernorm_bwd.twopass", int64_t{65536}, int64_t{4096})
      ->UseRealTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
  // The exact reference of the same problem alone (about 7 GB).
  benchmark::RegisterBenchmark("verify/reference_batch/layernorm_bwd/65536x4096", run_reference, true,
                               int64_t{65536}, int64_t{4096})
      ->UseRealTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
}

}  // namespace normcheck::bench
