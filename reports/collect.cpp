#include "collect.h"

#include <chrono>
#include <ctime>
#include <exception>

#include "bench_quick.h"
#include "progress.h"
#include "target_info.h"

namespace normcheck::report {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// run_bench reports progress through a plain function pointer.
Progress* g_progress = nullptr;
int g_bench_shapes = 0, g_bench_done = 0;
void bench_progress(const std::string& line) {
  if (g_progress) g_progress->update(g_bench_done++, g_bench_shapes, line);
}

}  // namespace

bench::BenchOptions report_bench_options(bool quick) {
  bench::BenchOptions o;
  for (const Kernel& k : kernel_table()) o.kernels.push_back(&k);
  if (quick) {
    cli::use_quick_bench_workload(o);
  } else {
    o.shapes = bench::standard_shapes();
    o.repeats = 5;
  }
  return o;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char s[32];
  std::strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return s;
}

ReportData collect(const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ReportData data;
  data.seed = options.seed;
  data.quick = options.quick;
  data.started_utc = utc_now();
  data.simd_target = simd::dispatched_target_name();
  data.accuracy_options = options.quick ? quick_accuracy(options.seed) : default_accuracy(options.seed);
  std::vector<const Kernel*> kernels = options.kernels;
  if (kernels.empty())
    for (const Kernel& k : kernel_table()) kernels.push_back(&k);

  // Weights: roughly the phases' shares of a run on this project's 2-core machine.
  enum Phase { kAccuracy, kFuzz, kClaims, kBench };
  Progress progress({options.quick ? 0.5 : 0.6, options.fuzz_cases > 0 ? 0.2 : 0, options.claims ? 0.25 : 0,
                     options.bench ? 0.25 : 0});
  g_progress = &progress;

  progress.phase(kAccuracy, "accuracy");
  auto t = std::chrono::steady_clock::now();
  data.accuracy = run_accuracy(kernels, data.accuracy_options, [&](int64_t done, int64_t total) {
    progress.update(static_cast<double>(done), static_cast<double>(total),
                    std::to_string(done) + "/" + std::to_string(total) + " rows");
  });
  data.accuracy_seconds = seconds_since(t);

  if (options.fuzz_cases > 0) {
    progress.phase(kFuzz, "fuzz");
    fuzz::CampaignOptions campaign;
    campaign.kernels = kernels;
    campaign.cases = options.fuzz_cases;
    campaign.seed = options.seed;
    campaign.corpus_dir = options.fuzz_dir;
    // The label of a finding is what the report shows; a shorter shrink leaves
    // a somewhat larger problem that replays the same (fuzz/campaign.h).
    campaign.shrink_seconds = options.quick ? 2 : 10;
    campaign.notes = {"normcheck report, seed " + std::to_string(options.seed)};
    const double total = static_cast<double>(kernels.size());
    std::size_t kernels_done = 0;
    std::string current;
    campaign.progress = [&](const std::string& kernel, int64_t, std::size_t findings, double) {
      if (kernel != current) current = kernel, ++kernels_done;
      progress.update(static_cast<double>(kernels_done - 1), total,
                      kernel + ", " + std::to_string(findings) + " findings so far");
    };
    t = std::chrono::steady_clock::now();
    data.fuzz = FuzzRun{options.fuzz_cases, fuzz::run_campaign(campaign)};
    data.fuzz_seconds = seconds_since(t);
  }

  if (options.claims) {
    progress.phase(kClaims, "claims");
    t = std::chrono::steady_clock::now();
    ClaimOptions claim_options;
    claim_options.seed = options.seed;
    const auto table = claim_table();
    int done = 0;
    for (const Claim& c : table) {
      progress.update(done, static_cast<double>(table.size()), std::string(c.id));
      const auto ct = std::chrono::steady_clock::now();
      ClaimRun run{&c, {}, 0};
      try {
        run.result = c.check(claim_options);
      } catch (const std::exception& e) {
        run.result.figure = std::string("check failed: ") + e.what();
      }
      run.seconds = seconds_since(ct);
      data.claims.push_back(std::move(run));
      ++done;
    }
    progress.update(done, static_cast<double>(table.size()));
    data.claims_seconds = seconds_since(t);
  }

  if (options.bench) {
    progress.phase(kBench, "bench");
    t = std::chrono::steady_clock::now();
    const bench::BenchOptions bo = report_bench_options(options.quick);
    g_bench_shapes = static_cast<int>(bo.shapes.size());
    g_bench_done = 0;
    data.bench = bench::run_bench(bo, &bench_progress);
    data.bench_seconds = seconds_since(t);
  }
  g_progress = nullptr;
  data.seconds = seconds_since(start);
  progress.finish("done in " + std::to_string(static_cast<int>(data.seconds + 0.5)) + " s");
  return data;
}

}  // namespace normcheck::report
