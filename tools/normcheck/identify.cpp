// `normcheck identify --plugin PATH [--kernel NAME]... [--cases N] [--seed S]
// [--json]`: which rounding policy each kernel with a spec of its own
// follows (fuzz/identify.h). On generated problems every candidate policy of
// the kernel's spec is held to the kernel's outputs; the report names those
// the outputs are consistent with, each forward policy's own distance from
// exact math in ULPs of y's format (a backward policy has none: its
// allowances are around exact math), and whether the declared policy is
// among them.
// Exit 0: every kernel's outputs are consistent with its declared policy;
// 1: not (a finding: another policy, or none); 2: bad usage.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "command.h"
#include "identify.h"
#include "json_number.h"
#include "json_text.h"
#include "judged.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_policy.h"
#include "plugin_option.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

constexpr uint64_t kDefaultSeed = 20261127;

struct IdentifyArgs {
  PluginOptions plugins;
  std::vector<std::string> kernels;
  int64_t cases = 64;
  std::string seed;
  bool json = false;
};

// A norm kernel, forward or backward (not one followed by a Linear).
bool norm_kernel(const Kernel& k) { return !spec_of(k).linear; }

// Without names and plugins: every row of the table with more than one
// policy to tell apart (a 16-bit row) or a spec of its own.
bool worth_identifying(const Kernel& k) {
  return norm_kernel(k) && (k.spec || candidate_policies(spec_of(k)).size() > 1);
}

std::vector<const Kernel*> select(const IdentifyArgs& args) {
  std::vector<const Kernel*> selected;
  std::set<std::string> seen;
  for (const std::string& name : args.kernels) {
    const Kernel* k = find_kernel(name);
    if (!k) throw UsageError("unknown kernel '" + name + "' (normcheck list shows the table)");
    if (!norm_kernel(*k))
      throw UsageError("kernel '" + name + "' is not a norm kernel: identify tells the rounding policies of a "
                       "norm's forward and backward apart (docs/ops.md)");
    if (seen.insert(name).second) selected.push_back(k);
  }
  if (!args.kernels.empty()) return selected;
  // the plugins' norm kernels when a plugin is loaded, else the table's
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::plugin && norm_kernel(k)) selected.push_back(&k);
  if (!selected.empty()) return selected;
  for (const Kernel& k : kernel_table())
    if (worth_identifying(k)) selected.push_back(&k);
  if (selected.empty()) throw UsageError("no norm kernel with policies to tell apart: load a version-2 plugin (--plugin)");
  return selected;
}

// The verdict in words: the declared policy holds, another does, or none.
std::string verdict_of(const fuzz::Identification& id) {
  if (!id.fault.empty()) return "the call failed: " + id.fault;
  if (id.problems.nothing_judged()) return unjudged_text(id.problems, "problems");
  if (id.declared_verdict().consistent()) return "follows its declared policy";
  for (const fuzz::CastVerdict& c : id.casts)
    if (c.consistent())
      return "quantization: its codes follow its declared cast done another way (" + to_text(c.cast) + ")";
  for (const fuzz::PolicyVerdict& v : id.policies)
    if (v.consistent()) return "policy_mismatch: its outputs follow another policy than the one it declares";
  return "accuracy: no candidate policy admits its outputs";
}

// What the search for a problem that splits a close candidate from the
// declared policy gave.
std::string split_text(const fuzz::Split& split) {
  if (split.found)
    return "told apart from " + split.other + ": a problem drawn to split them (" + split.problem + ") ran on it";
  return "cannot tell apart from " + split.other + ": on each of " + std::to_string(split.tries) +
         " problems drawn to split them, the two admit a common value for every output element";
}

bool passes(const fuzz::Identification& id) {
  return id.fault.empty() && !id.problems.nothing_judged() && id.declared_verdict().consistent();
}

// A kernel whose call failed was judged (the fault is its verdict).
KernelTallies tallies(const std::vector<fuzz::Identification>& ids) {
  KernelTallies t;
  for (const auto& id : ids) {
    t.emplace_back(id.kernel, id.problems);
    if (!id.fault.empty()) t.back().second.add_judged();
  }
  return t;
}

int run_identify(const IdentifyArgs& args) {
  if (args.cases < 1) throw UsageError("--cases must be at least 1");
  const uint64_t seed = seed_from(args.seed, kDefaultSeed);
  std::vector<fuzz::Identification> ids;
  for (const Kernel* k : select(args)) ids.push_back(fuzz::identify(*k, args.cases, seed));
  bool all = true;
  for (const auto& id : ids) all = all && passes(id);
  if (args.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& id : ids) {
      nlohmann::json policies = nlohmann::json::array();
      for (const fuzz::PolicyVerdict& v : id.policies)
        policies.push_back({{"spec", to_text(v.policy)},
                            {"name", v.name},
                            {"declared", v.policy == id.declared},
                            {"consistent", v.consistent()},
                            {"outside", v.outside},
                            {"exact_math_ulp", json_number(v.exact_math_ulp)}});
      nlohmann::json casts = nlohmann::json::array(), splits = nlohmann::json::array();
      for (const fuzz::CastVerdict& c : id.casts)
        casts.push_back({{"spec", to_text(c.cast)}, {"consistent", c.consistent()},
                         {"problems_outside", c.problems_outside}});
      for (const fuzz::Split& split : id.splits)
        splits.push_back({{"other", split.other}, {"tries", split.tries}, {"found", split.found},
                          {"problem", split.problem}, {"text", split_text(split)}});
      kernels.push_back({{"name", id.kernel},
                         {"spec", to_text(id.declared)},
                         {"problems", id.problems.judged},
                         {"declined", id.problems.declined},
                         {"declined_reason", judged_json(id.problems)["declined_reason"]},
                         {"exact_math_ulp", json_number(id.exact_math_ulp)},
                         {"verdict", verdict_of(id)},
                         {"pass", passes(id)},
                         {"policies", policies},
                         {"casts", casts},
                         {"splits", splits}});
    }
    std::cout << json_safe(nlohmann::json{{"seed", seed}, {"cases", args.cases}, {"kernels", kernels}}).dump(2)
              << "\n";
    return exit_code(tallies(ids), all ? kExitOk : kExitFinding, "problems");
  }
  std::printf("seed %llu, %lld problems per kernel\n", static_cast<unsigned long long>(seed),
              static_cast<long long>(args.cases));
  for (const auto& id : ids) {
    std::printf("\n%s\n  declares: %s\n  %s (%lld problems run, %lld declined)\n", id.kernel.c_str(),
                to_text(id.declared).c_str(), verdict_of(id).c_str(), static_cast<long long>(id.problems.judged),
                static_cast<long long>(id.problems.declined));
    if (id.problems.declined > 0 && !id.problems.nothing_judged())
      std::printf("  %s\n", id.problems.declined_text("problems").c_str());
    if (!id.fault.empty() || id.problems.nothing_judged()) continue;
    if (id.declared.direction == Direction::bwd) {
      std::printf("  its dx, dgamma and dbeta against exact math: %.3g ULP of their formats (scaled, "
                  "docs/semantics.md \"Metrics\")\n",
                  id.exact_math_ulp);
      std::printf("  policies its outputs are consistent with (each an allowance around exact math, "
                  "docs/accuracy_backward.md):\n");
    } else if (id.declared.quant) {
      std::printf("  its codes against exact math's: %.3g codes apart at most\n", id.exact_math_ulp);
      std::printf("  policies its outputs are consistent with (codes: the policy's own against exact math's):\n");
    } else {
      std::printf("  its y against exact math: %.3g ULP of y's format (scaled, docs/semantics.md \"Metrics\")\n",
                  id.exact_math_ulp);
      std::printf("  policies its outputs are consistent with (ULP: the policy's own y against exact math):\n");
    }
    // Backward policies nest (spec_policy.h, policy_within): one that only
    // adds words to another consistent one admits these outputs by that
    // alone, so it is counted, not listed (the declared one always is).
    const auto implied = [&](const fuzz::PolicyVerdict& v) {
      for (const fuzz::PolicyVerdict& w : id.policies)
        if (w.consistent() && !(w.policy == v.policy) && policy_within(w.policy, v.policy)) return true;
      return false;
    };
    bool any = false;
    int64_t more = 0;
    for (const fuzz::PolicyVerdict& v : id.policies) {
      if (!v.consistent()) continue;
      any = true;
      if (!(v.policy == id.declared) && implied(v)) {
        ++more;
        continue;
      }
      char figure[32] = "-";  // NaN: a backward policy, no result of its own
      if (!std::isnan(v.exact_math_ulp)) std::snprintf(figure, sizeof figure, "%.3g", v.exact_math_ulp);
      std::printf("    %-8s %s%s%s%s\n", figure, to_text(v.policy).c_str(),
                  v.policy == id.declared ? "  [declared]" : "", v.name.empty() ? "" : "\n             ",
                  v.name.c_str());
    }
    if (!any) std::printf("    none\n");
    if (more > 0)
      std::printf("    and %lld more, each with words added to one above (wider allowances)\n",
                  static_cast<long long>(more));
    for (const fuzz::CastVerdict& c : id.casts)
      if (c.consistent()) std::printf("  its codes also follow the cast: %s\n", to_text(c.cast).c_str());
    for (const fuzz::Split& split : id.splits) std::printf("  %s\n", split_text(split).c_str());
  }
  return exit_code(tallies(ids), all ? kExitOk : kExitFinding, "problems");
}

}  // namespace

void add_identify_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand(
      "identify", "Which rounding policy each kernel with a spec of its own follows (a version-2 plugin's)");
  auto args = std::make_shared<IdentifyArgs>();
  add_plugin_options(sub, args->plugins, true);
  sub->add_option("--kernel", args->kernels, "Identify only this kernel (repeatable; default: every one with a spec)");
  sub->add_option("--cases", args->cases, "Generated problems per kernel (default 64)");
  sub->add_option("--seed", args->seed, "Seed (default: NORMCHECK_SEED, else 20261127)");
  sub->add_flag("--json", args->json, "Print one JSON document");
  sub->callback([&action, args] {
    action = [args] {
      resolve_plugin_paths(args->plugins);  // before any plugin's constructor can chdir()
      load_plugins(args->plugins);
      return run_identify(*args);
    };
  });
}

}  // namespace normcheck::cli
