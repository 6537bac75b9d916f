// `normcheck fuzz`: an adversarial search for problems on which a kernel
// breaks its bound or misbehaves (fuzz/campaign.h), usually a user's kernel
// loaded with --plugin. Every finding is shrunk, labelled, saved to --corpus
// as a problem file and printed with the `normcheck check` command that
// replays it. Exit 1 on a finding.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "campaign.h"
#include "command.h"
#include "finding_json.h"
#include "json_number.h"
#include "json_text.h"
#include "judged.h"
#include "plugin_option.h"
#include "seed.h"
#include "shell_quote.h"

namespace normcheck::cli {
namespace {

constexpr uint64_t kDefaultSeed = 20261124;

struct FuzzArgs {
  PluginOptions plugins;
  std::vector<std::string> kernels;
  int64_t cases = 0;
  double seconds = 0;
  std::string seed;
  std::string corpus = "normcheck-corpus";
  std::string shard;  // "i/n"
  int jobs = 1;
  bool wide_range = false;
  bool json = false;
};

std::vector<const Kernel*> select(const FuzzArgs& args) {
  std::vector<const Kernel*> selected;
  if (!args.kernels.empty()) {
    std::set<std::string> seen;
    for (const std::string& name : args.kernels) {
      const Kernel* k = find_kernel(name);
      if (!k) throw UsageError("unknown kernel '" + name + "' (normcheck list shows the table)");
      if (seen.insert(name).second) selected.push_back(k);
    }
    return selected;
  }
  // Default: the plugins' kernels, or, without plugins, every kernel of the table.
  for (const Kernel& k : kernel_table())
    if (args.plugins.paths.empty() || k.origin == Origin::plugin) selected.push_back(&k);
  return selected;
}

std::pair<int, int> parse_shard(const std::string& text) {
  if (text.empty()) {
    // A CI matrix that already shards gtest suites shards the campaign the same way.
    const char* index = std::getenv("GTEST_SHARD_INDEX");
    const char* total = std::getenv("GTEST_TOTAL_SHARDS");
    if (index && total && *index && *total) return parse_shard(std::string(index) + "/" + total);
    return {0, 1};
  }
  int i = -1, n = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &i, &n, &rest) != 2 || n < 1 || i < 0 || i >= n)
    throw UsageError("--shard must be i/n with 0 <= i < n, got '" + text + "'");
  return {i, n};
}

std::string self_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("normcheck") : p.string();
}

int run_fuzz(FuzzArgs args) {
  if (args.cases < 0) throw UsageError("--cases must be >= 0");
  if (!(args.seconds >= 0) || std::isinf(args.seconds)) throw UsageError("--seconds must be finite and >= 0");
  // Before any plugin's constructor runs (it may chdir()): plugin_option.h.
  args.corpus = absolute_path(args.corpus);
  resolve_plugin_paths(args.plugins);
  load_plugins(args.plugins);
  const auto [shard_index, shard_count] = parse_shard(args.shard);

  fuzz::CampaignOptions options;
  options.kernels = select(args);
  if (options.kernels.empty()) throw UsageError("no kernel to fuzz");
  options.cases = args.cases;
  options.seconds = args.cases == 0 && args.seconds == 0 ? 10 : args.seconds;
  options.seed = seed_from(args.seed, kDefaultSeed);
  options.jobs = args.jobs;
  options.wide_range = args.wide_range;
  options.shard_index = shard_index;
  options.shard_count = shard_count;
  options.corpus_dir = args.corpus;
  options.isolation = isolation_options(args.plugins);
  options.notes = {"seed " + std::to_string(options.seed)};
  std::cerr << "fuzz: seed " << options.seed << " (--seed or NORMCHECK_SEED), "
            << (options.cases ? std::to_string(options.cases) + " cases per kernel"
                              : std::to_string(options.seconds) + " s")
            << ", shard " << shard_index << "/" << shard_count << ", corpus " << args.corpus << "\n";
  const bool tty = isatty(2);
  double last_print = -1;
  options.progress = [&](const std::string& kernel, int64_t cases, std::size_t findings, double seconds) {
    if (!tty && seconds - last_print < 2) return;
    last_print = seconds;
    std::fprintf(stderr, "%sfuzz: %s: %lld cases, %zu findings so far, %.1f s%s", tty ? "\r" : "", kernel.c_str(),
                 static_cast<long long>(cases), findings, seconds, tty ? "   " : "\n");
  };

  const fuzz::CampaignResult result = fuzz::run_campaign(options);
  if (tty) std::fprintf(stderr, "\n");
  const std::string binary = shell_quote(self_path());
  // Every word shell-quoted: the kernel's name is the plugin's text, and the
  // line is meant to be pasted into a shell.
  const auto reproduce = [&](const fuzz::Finding& f) {
    // A finding with no problem is the library's loading: listing it shows it again.
    if (f.file.empty()) {
      std::string command = binary + " list";
      for (const auto& p : args.plugins.paths)
        command += " --plugin " + shell_quote(std::filesystem::absolute(p).lexically_normal().string());
      return command;
    }
    return binary + " check --input " +
           shell_quote(std::filesystem::absolute(f.file).lexically_normal().string()) + plugin_arguments(args.plugins) +
           " --kernel " + shell_quote(f.kernel);
  };

  if (args.json) {
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& f : result.findings) {
      findings.push_back({{"kernel", f.kernel},
                          {"label", f.label},
                          {"input", f.file.empty() ? nlohmann::json(nullptr)
                                                   : nlohmann::json(std::filesystem::absolute(f.file).lexically_normal().string())},
                          {"reproduce", reproduce(f)},
                          {"detail", f.detail},
                          {"op", to_string(f.op)},
                          {"dtype", to_string(f.dtype)},
                          {"rows", f.problem.rows},
                          {"cols", f.problem.cols},
                          {"from_corpus", f.from_corpus}});
      add_finding_figures(findings.back(), f);
    }
    nlohmann::json limits = nlohmann::json::array();
    for (const auto& f : result.limits)
      limits.push_back({{"kernel", f.kernel}, {"label", f.label}, {"detail", f.detail},
                        {"rows", f.problem.rows}, {"cols", f.problem.cols}});
    nlohmann::json beyond_cap = nlohmann::json::array();
    for (const auto& [kernel, cases] : result.beyond_cap) beyond_cap.push_back({{"kernel", kernel}, {"cases", cases}});
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& [kernel, tally] : result.judged) {
      kernels.push_back(judged_json(tally));
      kernels.back()["kernel"] = kernel;
    }
    nlohmann::json doc = {{"cases", result.cases},
                          {"seconds", json_number(result.seconds)},
                          {"seed", options.seed},
                          {"kernels", kernels},
                          {"findings", findings},
                          {"beyond_cap", beyond_cap}};
    if (args.wide_range) doc["limits"] = limits;
    std::cout << json_safe(doc).dump(2) << "\n";  // paths are bytes: json_text.h
  } else {
    std::printf("%lld cases on %zu kernels in %.1f s, seed %llu: %zu findings\n",
                static_cast<long long>(result.cases), options.kernels.size(), result.seconds,
                static_cast<unsigned long long>(options.seed), result.findings.size());
    for (const auto& [kernel, tally] : result.judged)
      if (tally.declined > 0 || tally.nothing_judged())
        std::printf("%s: %s\n", kernel.c_str(),
                    (tally.nothing_judged() ? unjudged_text(tally, "cases") : tally.declined_text()).c_str());
    for (const auto& f : result.findings) {
      if (f.input_class.empty()) {  // a library's loading: no problem, no class
        std::printf("\n%s: %s\n    %s\n", f.kernel.c_str(), f.label.c_str(), f.detail.c_str());
      } else {
        std::printf("\n%s: %s, %s%s (%lld x %lld): %s\n    %s\n", f.kernel.c_str(), f.label.c_str(),
                    std::string(fuzz::input_class(f.input_class).text).c_str(),
                    f.from_corpus ? " (from the corpus)" : "", static_cast<long long>(f.problem.rows),
                    static_cast<long long>(f.problem.cols), fuzz::ratio_text(f.label, f.error_over_bound, f.error_over_tight).c_str(),
                    f.detail.c_str());
      }
      if (f.severity) std::printf("    %s\n", fuzz::severity_text(*f.severity).c_str());
      std::printf("    input: %s\n    reproduce: %s\n",
                  f.file.empty() ? "(none: loading the library is the finding)" : f.file.string().c_str(),
                  reproduce(f).c_str());
    }
    for (const auto& [kernel, cases] : result.beyond_cap)
      std::printf("\n%s: %lld more labelled cases not classified or kept: the cap of %d findings per kernel\n",
                  kernel.c_str(), static_cast<long long>(cases), options.max_findings_per_kernel);
    for (const auto& f : result.limits)
      std::printf("\nlimit of %s (outside its declared domain, not a finding): %s (%lld x %lld)\n    %s\n",
                  f.kernel.c_str(), f.label.c_str(), static_cast<long long>(f.problem.rows),
                  static_cast<long long>(f.problem.cols), f.detail.c_str());
  }
  return exit_code(result.judged, result.findings.empty() ? kExitOk : kExitFinding);
}

}  // namespace

void add_fuzz_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<FuzzArgs>();
  CLI::App* sub = app.add_subcommand(
      "fuzz", "Search for problems on which a kernel (usually a --plugin's) breaks its bound, crashes, hangs, "
              "writes out of bounds, leaves an output unwritten, writes its input or is nondeterministic");
  add_plugin_options(sub, args->plugins, true);
  sub->add_option("--kernel", args->kernels, "Fuzz this kernel (repeatable; default: the plugins' kernels, "
                                             "or every kernel without --plugin)");
  auto* cases = sub->add_option("--cases", args->cases, "Generated cases per kernel");
  sub->add_option("--seconds", args->seconds, "Wall-clock budget, split over the kernels (default 10)")
      ->excludes(cases);
  sub->add_option("--seed", args->seed, "Seed (default: NORMCHECK_SEED, else 20261124)");
  sub->add_option("--corpus", args->corpus,
                  "Directory for findings; its files for the fuzzed kernels are replayed first (default "
                  "normcheck-corpus)");
  sub->add_option("--jobs", args->jobs, "Batches of cases run at once, each in its own child process "
                                      "(default 1; the machine's cores: " +
                                      std::to_string(std::max(1u, std::thread::hardware_concurrency())) + ")")
      ->check(CLI::Range(1, 256));
  sub->add_option("--shard", args->shard, "Run shard i of n (i/n): disjoint cases per shard (default: "
                                          "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS when set, else 0/1)");
  sub->add_flag("--wide-range", args->wide_range,
                "Also draw problems beyond each kernel's declared domain (every float, NaN, inf, eps and d); what a kernel "
                "does there is listed as its limits, not as findings");
  sub->add_flag("--json", args->json, "Print one JSON document: {cases, seconds, findings: [{kernel, label, "
                                      "class, input, reproduce, severity, ...}]}");
  sub->callback([&action, args] { action = [args] { return run_fuzz(*args); }; });
}

}  // namespace normcheck::cli
