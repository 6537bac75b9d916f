// `normcheck accuracy`: a kernel's figures on the realistic rows of every input
// class that applies to it (fuzz/accuracy_baseline.h), printed, recorded in a
// baseline file (--update-baseline) or held to one (--check-baseline, with
// --worse-by the factor a figure may grow by). A plugin's kernels run in
// kernel hosts, as `fuzz` runs them; a table kernel is named with --kernel.
#include <iostream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "accuracy_baseline.h"
#include "baseline_options.h"
#include "command.h"
#include "json_number.h"
#include "json_text.h"
#include "judged.h"
#include "normcheck/io.h"
#include "normcheck/op_spec.h"
#include "plugin_option.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

struct AccuracyArgs {
  PluginOptions plugins;
  std::vector<std::string> kernels;
  std::string seed;
  BaselineOptions baseline;
  bool json = false;
};

std::vector<const Kernel*> select(const AccuracyArgs& args) {
  std::vector<const Kernel*> selected;
  std::set<std::string> seen;
  for (const std::string& name : args.kernels) {
    const Kernel* k = find_kernel(name);
    if (!k) throw UsageError("unknown kernel '" + name + "' (normcheck list shows the table)");
    if (seen.insert(name).second) selected.push_back(k);
  }
  if (!selected.empty()) return selected;
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::plugin) selected.push_back(&k);
  if (selected.empty())
    throw UsageError("no kernel to measure: load a plugin (--plugin) or name kernels (--kernel); the table's "
                     "kernels as a whole are held to a baseline by `normcheck report --check-baseline`");
  return selected;
}

int run_accuracy(const AccuracyArgs& args) {
  const std::optional<fuzz::AccuracyRun> baseline = read_baseline_options(args.baseline);
  // The rows are fixed by the seed: the baseline's, which a --seed must not
  // contradict. NORMCHECK_SEED, which varies the random runs of a test suite,
  // is not read: a baseline's rows do not vary.
  fuzz::AccuracyRun run;
  run.seed = !args.seed.empty() ? parse_seed(args.seed) : baseline ? baseline->seed : fuzz::kAccuracySeed;
  if (baseline && run.seed != baseline->seed)
    throw UsageError(args.baseline.check + " was measured with seed " + std::to_string(baseline->seed) +
                     ", this run's is " + std::to_string(run.seed) + ": the rows would differ");
  const std::vector<const Kernel*> kernels = select(args);
  const fuzz::IsolationOptions isolation = isolation_options(args.plugins);
  KernelTallies tallies;
  std::vector<std::pair<const Kernel*, std::vector<fuzz::AccuracyFigure>>> per_kernel;
  for (const Kernel* k : kernels) {
    std::vector<fuzz::AccuracyFigure> figures;
    tallies.emplace_back(std::string(k->name), fuzz::measure_accuracy(*k, run.seed, isolation, figures));
    run.figures.insert(run.figures.end(), figures.begin(), figures.end());
    per_kernel.emplace_back(k, std::move(figures));
  }
  std::optional<fuzz::AccuracyComparison> comparison;
  if (baseline) comparison = fuzz::compare_accuracy(*baseline, run, args.baseline.worse_by);
  // A problem that failed is a finding whatever the baseline says: the
  // figures are relative, the bound and the tight standard are not.
  const std::vector<const fuzz::AccuracyFigure*> failed = fuzz::failed_classes(run.figures);
  const bool worse = comparison && !comparison->worse.empty();
  const int verdict = worse || !failed.empty() ? kExitFinding : kExitOk;
  bool unjudged = false;
  for (const auto& [name, t] : tallies) unjudged = unjudged || t.nothing_judged();
  // A baseline records kernels that pass: nothing is written for a run that
  // judged nothing of a kernel (its figures would record a pass never
  // measured) or in which a problem failed.
  const bool write = !args.baseline.update.empty() && !unjudged && failed.empty();
  if (write) write_file_atomically(args.baseline.update, fuzz::format_accuracy_baseline(run));

  if (args.json) {
    nlohmann::json doc{{"seed", run.seed}};
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < per_kernel.size(); ++i) {
      nlohmann::json figures = nlohmann::json::array();
      for (const auto& f : per_kernel[i].second) figures.push_back(figure_json(f));
      nlohmann::json k{{"name", per_kernel[i].first->name}, {"spec", to_text(spec_of(*per_kernel[i].first))},
                       {"figures", figures}};
      k.update(judged_json(tallies[i].second));
      nlohmann::json failed_classes = nlohmann::json::array();
      for (const auto& f : per_kernel[i].second)
        if (f.output == "all" && !f.label.empty())
          failed_classes.push_back({{"class", f.input_class}, {"label", f.label}});
      k["failed"] = failed_classes;
      list.push_back(k);
    }
    doc["kernels"] = list;
    if (comparison) doc["baseline"] = comparison_json(*comparison, args.baseline);
    std::cout << json_safe(doc).dump(2) << "\n";
  } else {
    std::cout << "seed " << run.seed << ": each class's realistic rows (normcheck fuzz's severity rows)\n";
    for (std::size_t i = 0; i < per_kernel.size(); ++i) {
      const Kernel& k = *per_kernel[i].first;
      std::cout << "\n" << k.name << "  " << to_text(spec_of(k)) << "\n";
      if (tallies[i].second.nothing_judged()) continue;  // exit_code() names it on stderr
      std::cout << fuzz::format_figures(per_kernel[i].second);
    }
    if (!failed.empty()) {
      std::cout << "\nfailed (a finding whatever the baseline; `normcheck fuzz` shrinks and saves it):\n";
      std::cout << fuzz::format_failed(failed);
    }
    if (comparison)
      std::cout << "\n" << fuzz::format_comparison(*comparison, args.baseline.check, args.baseline.worse_by);
    if (write) std::cout << "\nbaseline written to " << args.baseline.update << "\n";
    else if (!args.baseline.update.empty())
      std::cout << "\nbaseline not written: " << (unjudged ? "a kernel had nothing judged" : "a problem failed")
                << "\n";
  }
  return exit_code(tallies, verdict, "problems");
}

}  // namespace

void add_accuracy_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand(
      "accuracy",
      "A kernel's accuracy figures on every input class's realistic rows, recorded in or held to a baseline file");
  auto args = std::make_shared<AccuracyArgs>();
  add_plugin_options(sub, args->plugins, true);
  sub->add_option("--kernel", args->kernels, "Measure only this kernel (repeatable; default: every plugin kernel)");
  sub->add_option("--seed", args->seed,
                  "Seed of the rows (default: the baseline's with --check-baseline, else " +
                      std::to_string(fuzz::kAccuracySeed) + ")");
  add_baseline_options(sub, args->baseline, "each kernel's figures");
  sub->add_flag("--json", args->json, "Print one JSON document");
  sub->callback([&action, args] {
    action = [args] {
      resolve_plugin_paths(args->plugins);  // before any plugin's constructor can chdir()
      args->baseline.check = absolute_path(args->baseline.check);
      args->baseline.update = absolute_path(args->baseline.update);
      load_plugins(args->plugins);
      return run_accuracy(*args);
    };
  });
}

}  // namespace normcheck::cli
