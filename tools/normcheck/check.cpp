// `normcheck check --input FILE`: runs kernels on the rows of a file (each line
// its own problem) and holds each kernel to its declared bound.
//
// Backward kernels need an upstream gradient dy that the file does not hold: it
// is drawn from N(0, 1) per row with --seed (printed), so a run reproduces.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "command.h"
#include "json_number.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/row_file.h"

namespace normcheck::cli {
namespace {

struct CheckOptions {
  std::string input;
  std::string op = "layernorm";
  std::string eps_text = "1e-5";
  std::vector<std::string> kernels;
  uint64_t seed = 1;
  bool json = false;
};

bool belongs_to(Op op, const std::string& family) {
  const bool layernorm = op == Op::layernorm_fwd || op == Op::layernorm_bwd;
  return family == "layernorm" ? layernorm : !layernorm;
}

bool is_backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }

std::vector<const Kernel*> select_kernels(const CheckOptions& options) {
  std::vector<const Kernel*> selected;
  if (options.kernels.empty()) {
    for (const Kernel& k : kernel_table())
      if (belongs_to(k.op, options.op)) selected.push_back(&k);
    return selected;
  }
  std::set<std::string> seen;
  for (const std::string& name : options.kernels) {
    const Kernel* k = find_kernel(name);
    if (!k) {
      std::string known;
      for (const Kernel& row : kernel_table()) known += "\n  " + std::string(row.name);
      throw UsageError("unknown kernel '" + name + "'; the table has:" + known);
    }
    if (seen.insert(name).second) selected.push_back(k);
  }
  return selected;
}

struct KernelSummary {
  const Kernel* kernel;
  int64_t rows = 0, declined = 0;
  double max_ulp = 0, max_ratio = 0;
  bool pass = true;
  std::string last_decline;
  Worst worst;
  int64_t worst_line = 0;
};

int run_check(const CheckOptions& options) {
  float eps;
  try {
    eps = parse_float_token(options.eps_text);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--eps: " + std::string(e.what()));
  }
  if (!(eps >= 0) || std::isinf(eps)) throw UsageError("--eps must be finite and >= 0, got " + options.eps_text);

  std::vector<ParsedRow> rows;
  try {
    rows = read_row_file(options.input);
  } catch (const RowFileError& e) {
    throw UsageError(e.what());
  }
  const std::vector<const Kernel*> kernels = select_kernels(options);
  if (kernels.empty()) throw UsageError("no kernel in the table for --op " + options.op);

  std::vector<KernelSummary> summaries;
  for (const Kernel* k : kernels) summaries.emplace_back().kernel = k;

  std::mt19937_64 rng(options.seed);
  for (const ParsedRow& row : rows) {
    Problem problem;
    problem.rows = 1;
    problem.cols = static_cast<int64_t>(row.values.size());
    problem.x = row.values;
    problem.eps = eps;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    problem.dy.resize(row.values.size());
    for (float& g : problem.dy) g = normal(rng);

    for (KernelSummary& s : summaries) {
      Problem run = problem;
      if (!is_backward(s.kernel->op)) run.dy.clear();
      const Evaluation e = evaluate(*s.kernel, run);
      if (!e.declined.empty()) {
        ++s.declined;
        s.last_decline = e.declined;
        continue;
      }
      ++s.rows;
      s.max_ulp = std::max(s.max_ulp, e.max_ulp);
      if (!e.pass) s.pass = false;
      const bool worse = e.max_error_over_bound > s.max_ratio || std::isnan(e.max_error_over_bound) ||
                         (!e.pass && s.worst_line == 0);
      if (worse) {
        s.max_ratio = std::isnan(e.max_error_over_bound) ? INFINITY : e.max_error_over_bound;
        s.worst = e.worst;
        s.worst_line = row.line;
      }
    }
  }

  const bool all_pass = std::all_of(summaries.begin(), summaries.end(), [](const auto& s) { return s.pass; });
  if (options.json) {
    nlohmann::json out;
    out["input"] = options.input;
    out["eps"] = eps;
    out["seed"] = options.seed;
    out["kernels"] = nlohmann::json::array();
    for (const KernelSummary& s : summaries) {
      nlohmann::json k = {{"name", s.kernel->name},
                          {"op", to_string(s.kernel->op)},
                          {"origin", to_string(s.kernel->origin)},
                          {"rows", s.rows},
                          {"declined_rows", s.declined},
                          {"max_ulp", json_number(s.max_ulp)},
                          {"max_error_over_bound", json_number(s.max_ratio)},
                          {"pass", s.pass}};
      if (s.declined) k["declined_reason"] = s.last_decline;
      if (s.worst_line)
        k["worst"] = {{"line", s.worst_line},       {"output", s.worst.output},
                      {"col", s.worst.col},         {"computed", json_number(s.worst.computed)},
                      {"exact", json_number(s.worst.exact)}, {"allowed", json_number(s.worst.allowed)}};
      out["kernels"].push_back(std::move(k));
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%zu rows from %s, eps = %g, dy for backward kernels: N(0,1) with --seed %llu\n\n",
                rows.size(), options.input.c_str(), static_cast<double>(eps),
                static_cast<unsigned long long>(options.seed));
    std::printf("%-34s %-14s %6s %12s %14s  %s\n", "kernel", "op", "rows", "max_ulp", "max_err/bound",
                "verdict");
    for (const KernelSummary& s : summaries) {
      const std::string name(s.kernel->name);
      const std::string op(to_string(s.kernel->op));
      std::printf("%-34s %-14s %6lld %12.4g %14.4g  %s\n", name.c_str(), op.c_str(),
                  static_cast<long long>(s.rows), s.max_ulp, s.max_ratio,
                  s.rows == 0 ? "declined" : (s.pass ? "pass" : "FAIL"));
      if (!s.pass)
        std::printf("    worst: line %lld, %s[%lld] = %a, exact %a, allowed error %.3g\n",
                    static_cast<long long>(s.worst_line), s.worst.output.c_str(),
                    static_cast<long long>(s.worst.col), static_cast<double>(s.worst.computed),
                    s.worst.exact, s.worst.allowed);
      if (s.declined) std::printf("    declined %lld rows: %s\n", static_cast<long long>(s.declined),
                                  s.last_decline.c_str());
    }
  }
  return all_pass ? kExitOk : kExitFinding;
}

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CheckOptions>();
  auto* sub = app.add_subcommand("check", "Run kernels on the rows of a file and hold them to their bounds");
  sub->add_option("--input", options->input, "Row file: one row per line (see docs/cli.md)")->required();
  sub->add_option("--op", options->op, "Which kernels run when no --kernel is named")
      ->check(CLI::IsMember({"layernorm", "rmsnorm"}));
  sub->add_option("--eps", options->eps_text, "eps (decimal or hex-float, >= 0; default 1e-5)");
  sub->add_option("--kernel", options->kernels, "Run only this kernel (repeatable; default: all of --op)");
  sub->add_option("--seed", options->seed, "Seed of the dy drawn for backward kernels (default 1)");
  sub->add_flag("--json", options->json, "Print one JSON document");
  sub->callback([&action, options] { action = [options] { return run_check(*options); }; });
}

}  // namespace normcheck::cli
