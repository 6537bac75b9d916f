// `normcheck report`: the main job. Every kernel of the table over the
// adversarial row families, a short fuzz campaign, the claims and the bench,
// written to DIR as report.html (verdicts and plots, self-contained), report.md
// (for a pull request comment), results.json (reports/results.schema.json),
// junit.xml and findings/ (the fuzz campaign's shrunk problems, replayable).
// With --check-baseline FILE the run is held to the accuracy baseline; with
// --update-baseline FILE it rewrites it (reports/baseline.h).
//
// Exit codes: 0 all good; 1 a kernel got worse than the baseline, a kernel of
// ours is graded below trusted (it broke its bound, or worse: reports/grade.h),
// a control was not caught, or a claim could not be decided (third parties'
// grades and REFUTED claims are findings, reported in full, not failures of
// the run); 2 bad usage or input.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "baseline.h"
#include "collect.h"
#include "command.h"
#include "normcheck/io.h"
#include "plots.h"
#include "seed.h"
#include "writers.h"

namespace normcheck::cli {
namespace {

namespace fs = std::filesystem;

// Generated problems per kernel of the report's fuzz campaign. The quick
// workload's 16 is one short batch per kernel (CI: 7 s over the table); the
// default's 200 take about 40 s over the table of 26 kernels on this project's
// shared 2-core machine (`normcheck fuzz --cases 200`: 38 s wall, 19 s CPU).
constexpr int64_t kQuickFuzzCases = 16;
constexpr int64_t kFuzzCases = 200;

struct ReportArgs {
  std::string out = "build/report";
  bool quick = false, no_bench = false, no_claims = false, no_fuzz = false;
  std::optional<int64_t> fuzz_cases;  // absent: the workload's default
  std::string seed;
  std::string check_baseline, update_baseline;
};

std::optional<report::Baseline> read_baseline_or_usage(const std::string& path) {
  if (path.empty()) return std::nullopt;
  try {
    return report::read_baseline(path);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

int run_report(const ReportArgs& args) {
  if (!args.check_baseline.empty() && !args.update_baseline.empty())
    throw UsageError("--check-baseline and --update-baseline are exclusive: check, or rewrite");
  const std::optional<report::Baseline> baseline = read_baseline_or_usage(args.check_baseline);

  report::RunOptions options;
  options.quick = args.quick;
  options.bench = !args.no_bench;
  options.claims = !args.no_claims;
  options.seed = seed_from(args.seed, baseline ? baseline->seed : ClaimOptions{}.seed);
  if (baseline) {
    if (baseline->quick != args.quick)
      throw UsageError(args.check_baseline + " holds the " + (baseline->quick ? "quick" : "default") +
                       " workload's figures; run with" + (baseline->quick ? "" : "out") + " --quick to check it");
    if (baseline->seed != options.seed)
      throw UsageError(args.check_baseline + " was made with seed " + std::to_string(baseline->seed) +
                       ", this run uses " + std::to_string(options.seed) + " (--seed or NORMCHECK_SEED)");
  }
  if (args.fuzz_cases && *args.fuzz_cases < 0) throw UsageError("--fuzz-cases must be >= 0");
  if (args.no_fuzz && args.fuzz_cases) throw UsageError("--no-fuzz and --fuzz-cases are exclusive");
  const fs::path out(args.out);
  // The campaign saves its findings into a folder of this run's own, which
  // replaces findings/ only once every other file is written.
  const fs::path findings_partial = report_folder_or_usage(out);
  options.fuzz_cases = args.no_fuzz ? 0 : args.fuzz_cases.value_or(args.quick ? kQuickFuzzCases : kFuzzCases);
  options.fuzz_dir = findings_partial;

  std::cerr << "report: seed " << options.seed << " (--seed or NORMCHECK_SEED), " << (args.quick ? "quick" : "default")
            << " workload, writing to " << out.string() << "\n";
  const report::ReportData data = report::collect(options);
  const auto verdicts = report::verdicts(data);
  std::optional<report::BaselineCheck> check;
  if (baseline) check = report::check_baseline(data, *baseline);
  // Nothing is written before the run is done, so an interrupted run leaves
  // the previous report as it was.
  const auto plots = report::write_report(out, data, verdicts, check, findings_partial);
  if (!args.update_baseline.empty()) {
    write_file_atomically(args.update_baseline, report::format_baseline(report::baseline_of(data)));
    std::cout << "baseline written to " << args.update_baseline << "\n";
  }

  for (const auto& v : verdicts)
    std::cout << v.kernel->name << "  " << report::to_string(v.grade) << "  worst error/bound " << report::figure(v.worst_ratio) << "\n";
  bool undecided = false;
  for (const auto& c : data.claims) undecided = undecided || c.result.verdict == Verdict::unchecked;
  if (check) std::cout << report::format_check(*check, args.check_baseline);
  for (const auto& p : plots)
    if (!p.error.empty()) std::cerr << "report: plot " << p.id << ": " << p.error << "\n";
  if (!report::gnuplot_available())
    std::cerr << "report: gnuplot not found: report.html has no plots (scripts/setup.sh installs gnuplot-nox)\n";
  std::cout << "report: " << fs::absolute(out / "report.html").lexically_normal().string() << "\n";

  const bool regressed = check && !check->regressions.empty();
  return regressed || report::run_failed(verdicts) || undecided ? kExitFinding : kExitOk;
}

}  // namespace

fs::path report_folder_or_usage(const fs::path& out) {
  try {
    return report::prepare_report_folder(out);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

void check_report_folder_or_usage(const fs::path& out) {
  try {
    report::check_report_folder(out);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

void add_report_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "The main job: every kernel of the table over the adversarial row families, the claims and the bench, "
      "written to DIR as report.html, report.md, results.json and junit.xml (docs/report.md).\n"
      "Exit 0 all good; 1 a kernel got worse than --check-baseline's figures, a kernel of ours is graded below "
      "trusted, "
      "a control was not caught, or a claim could not be decided; 2 bad usage.");
  sub->add_option("--out", args->out, "Folder of the report (default build/report)");
  sub->add_flag("--quick", args->quick, "The quick workload (about a minute): CI and the baseline");
  sub->add_option("--seed", args->seed,
                  "Seed of the rows (default: NORMCHECK_SEED, else the baseline's with --check-baseline, else 20261121)");
  sub->add_option("--check-baseline", args->check_baseline,
                  "Exit 1 when a kernel's worst error got larger than in this baseline file");
  sub->add_option("--update-baseline", args->update_baseline, "Rewrite this baseline file with this run's figures");
  sub->add_flag("--no-bench", args->no_bench, "Leave the bench out");
  sub->add_flag("--no-claims", args->no_claims, "Leave the claims out");
  sub->add_flag("--no-fuzz", args->no_fuzz, "Leave the fuzz campaign out");
  sub->add_option("--fuzz-cases", args->fuzz_cases,
                  "Generated problems per kernel of the fuzz campaign (default " + std::to_string(kFuzzCases) +
                      ", " + std::to_string(kQuickFuzzCases) + " with --quick)");
  sub->callback([&action, args] { action = [args] { return run_report(*args); }; });
}

}  // namespace normcheck::cli
