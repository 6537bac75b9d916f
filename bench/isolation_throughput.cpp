// Cases per second through the isolation a plugin's kernel runs in, by row
// length d: run_isolated() (fuzz/isolation.h) on batches of 64 one-row
// problems, each case run twice and compared bit for bit as fuzz does it, on
// examples/plugin's float32 LayerNorm forward. Two ways, in the same run:
//   hosted  the plugin loaded in a kernel host (fuzz/kernel_host.h): evaluate()
//           here, each kernel call in the host through shared memory;
//   forked  the same library dlopen()ed into this process and run by the fork
//           server (one child per 64 cases, evaluate() in the child with every
//           array between guard pages): how every plugin ran before the
//           kernel host, kept for the table's own rows.
// Counter `cases_per_second` (wall clock). The rows are make_problem()'s
// (verify_throughput.h), so the work of the reference and the verdict is the
// same in both; they differ only in how the kernel is reached.
//   normcheck_gbench --benchmark_filter='^isolation/'
#include "isolation_throughput.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "host/plugin_abi.h"
#include "isolation.h"
#include "normcheck/plugin.h"
#include "plugin_loader.h"
#include "verify_throughput.h"

namespace normcheck::bench {
namespace {

constexpr const char* kKernel = "example.layernorm_fwd";
constexpr int kBatch = 64;

// The plugin's row as load_plugin() gives it: the calls run in a kernel host.
const Kernel& hosted_row() {
  static const Kernel row = [] {
    for (const Kernel& k : fuzz::load_plugin(NORMCHECK_BENCH_PLUGIN))
      if (k.name == kKernel) return k;
    throw std::runtime_error(std::string("the bench plugin has no ") + kKernel);
  }();
  return row;
}

// The same function called in this process (its row is not hosted, so
// run_isolated() takes the fork server).
const Kernel& forked_row() {
  static const Kernel row = [] {
    void* handle = dlopen(NORMCHECK_BENCH_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    const auto list = handle ? reinterpret_cast<normcheck_plugin_kernels_fn>(dlsym(handle, "normcheck_plugin_kernels"))
                             : nullptr;
    int n = 0;
    const nc_kernel* kernels = list ? list(&n) : nullptr;
    for (int i = 0; i < n; ++i)
      if (std::string(kernels[i].name) == kKernel) {
        Kernel k = hosted_row();
        k.fn = host::typed_fn(k.op, k.dtype, kernels[i].fn);
        return k;
      }
    throw std::runtime_error(std::string("cannot dlopen the bench plugin's ") + kKernel);
  }();
  return row;
}

void run_cases(benchmark::State& state, bool hosted, int64_t d) {
  const Kernel* kernel = nullptr;
  try {
    kernel = hosted ? &hosted_row() : &forked_row();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  std::vector<Problem> batch;
  for (int i = 0; i < kBatch; ++i) batch.push_back(make_problem(1, d, false));
  for (auto _ : state) {
    const auto results = fuzz::run_isolated(*kernel, batch, {});
    for (const auto& r : results)
      if (!r.label.empty()) {
        state.SkipWithError(("the kernel got a finding (" + r.label + "): the figure would measure it").c_str());
        return;
      }
  }
  state.counters["cases_per_second"] =
      benchmark::Counter(static_cast<double>(kBatch) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

}  // namespace

void register_isolation_benchmarks() {
  for (const int64_t d : {4, 16, 64, 256, 1024, 4096})
    for (const bool hosted : {true, false}) {
      const std::string name = std::string("isolation/") + (hosted ? "hosted" : "forked") + "/d:" + std::to_string(d);
      benchmark::RegisterBenchmark(name.c_str(), run_cases, hosted, d)->UseRealTime();
    }
}

}  // namespace normcheck::bench
