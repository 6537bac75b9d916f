// `normcheck check --input FILE`: runs kernels on the rows of a file (each line
// its own problem) and holds each kernel to its declared bound.
//
// Backward kernels need an upstream gradient dy that a plain row file does not
// hold: it is drawn from N(0, 1) per row with --seed (printed), so a run
// reproduces. A problem file (row_file.h: `# nc.` lines with op, eps, gamma,
// beta, dy, ...) is one whole problem and is replayed exactly as written, on
// the kernels of its op and dtype (or the --kernel named). A plugin's kernels
// (--plugin) run in a child process (fuzz/isolation.h), as `normcheck fuzz`
// runs them, so a finding of fuzz replays bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "command.h"
#include "grade.h"
#include "json_number.h"
#include "json_text.h"
#include "judged.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "kernel_host.h"
#include "plugin_option.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

struct CheckOptions {
  std::string input;
  std::string op;  // layernorm | rmsnorm; empty: layernorm, or with --plugin every plugin kernel
  std::string eps_text;  // empty: 1e-5, or the problem file's
  std::vector<std::string> kernels;
  PluginOptions plugins;
  std::string seed_text;  // --seed as given, parsed by parse_seed (seed.h)
  uint64_t seed = 1;
  bool json = false;
};

// --op's families are the norms alone. A norm followed by a Linear needs W and
// b, which a plain row file does not hold: its rows run on problem files
// (nc.weight, nc.bias) or when named with --kernel, where a plain row is
// declined with that reason (evaluate.h, norm_linear_problem_declined).
bool belongs_to(Op op, const std::string& family) {
  if (is_norm_linear(op)) return false;
  const bool layernorm = op == Op::layernorm_fwd || op == Op::layernorm_bwd;
  return family == "layernorm" ? layernorm : !layernorm;
}

bool is_backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }

// The spec with mean and rstd / rrms written.
OpSpec with_statistics(OpSpec spec) {
  spec.stats = true;
  return spec;
}

// Why no kernel runs a problem file of a spec: the kernels of its op and
// dtype, each with its own spec, and what --kernel does.
std::string no_kernel_for(const ProblemFile& file, bool plugins_only) {
  std::string of_op;
  for (const Kernel& k : kernel_table())
    if (k.op == *file.op && k.dtype == file.dtype && (!plugins_only || k.origin == Origin::plugin))
      of_op += "\n  " + std::string(k.name) + ": " + to_text(spec_of(k));
  const std::string where = plugins_only ? "the plugins" : "the table";
  if (of_op.empty())
    return "no kernel of " + where + " is " + std::string(to_string(*file.op)) + " " +
           std::string(to_string(file.dtype)) + ", the problem file's op and dtype";
  return "no kernel of " + where + " has the problem file's spec '" + to_text(*file.spec) + "'" +
         (file.spec->stats ? "" : " (or that spec with statistics)") + "; those of its op and dtype are:" + of_op +
         "\n--kernel NAME judges one of them on the file's problem against its own spec";
}

// The kernels to run: those named, else every kernel of --op's family (default
// layernorm), or for a problem file every kernel of its op and dtype. With
// --plugin, only the plugins' kernels among those (as `fuzz` does), all of them
// when --op is not given, so a user's check of their library runs their
// kernels alone.
std::vector<const Kernel*> select_kernels(const CheckOptions& options, const ProblemFile& file) {
  const bool whole = file.whole && file.op;
  const bool plugins_only = !options.plugins.paths.empty();
  std::vector<const Kernel*> selected;
  if (options.kernels.empty()) {
    for (const Kernel& k : kernel_table())
      if ((whole ? k.op == *file.op && k.dtype == file.dtype && (!file.spec || spec_of(k) == *file.spec)
                 : options.op.empty() ? plugins_only || belongs_to(k.op, "layernorm")
                                      : belongs_to(k.op, options.op)) &&
          (!plugins_only || k.origin == Origin::plugin))
        selected.push_back(&k);
    // A file of a spec without statistics (stats=none, as the Python module
    // and judge save them): the kernels whose spec is the same but also
    // writes them, each judged against its own spec on the file's problem.
    if (selected.empty() && whole && file.spec && !file.spec->stats)
      for (const Kernel& k : kernel_table())
        if (k.op == *file.op && k.dtype == file.dtype && (!plugins_only || k.origin == Origin::plugin) &&
            with_statistics(*file.spec) == spec_of(k))
          selected.push_back(&k);
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
    if (whole && k->op != *file.op)
      throw UsageError("kernel '" + name + "' is " + std::string(to_string(k->op)) + ", the problem file is " +
                       std::string(to_string(*file.op)));
    if (seen.insert(name).second) selected.push_back(k);
  }
  return selected;
}

struct KernelSummary {
  const Kernel* kernel;
  JudgedTally rows;  // rows judged (a crash or hang included) and declined
  // The two ULP figures (evaluate.h): in ULPs of the row's scale and
  // elementwise in the output's format; NaN once a row had a NaN/inf mismatch.
  double max_ulp = 0, max_ulp_elementwise = 0, max_ratio = 0;
  // The tight standard on the realistic rows (evaluate.h, Evaluation::tight_rows).
  int64_t tight_rows = 0;
  double max_tight = 0;
  bool pass = true;
  Worst worst;
  int64_t worst_line = 0;
  std::string label, detail;  // the first finding's label (fuzz's labels) and its detail
  // A kernel with a spec of its own: y against exact math, and the policy's own y against it.
  double exact_math_ulp = 0, policy_exact_math_ulp = 0;
  // Every row's label, for the grade (reports/grade.h). The rows of a file
  // are not known to be realistic: an error beyond the bound grades a kernel
  // less accurate, however large, unless a label makes it wrong or unsafe.
  report::GradeFacts facts;
};

// The kernels whose having nothing judged makes the command exit 2: each
// kernel named with --kernel and each plugin kernel, and, when the table's
// kernels of --op run by default, all of them together (a table kernel may
// decline a file's rows that its siblings take).
KernelTallies unjudged_that_count(const std::vector<KernelSummary>& summaries, const CheckOptions& options) {
  KernelTallies counted;
  JudgedTally table;
  for (const KernelSummary& s : summaries) {
    if (!options.kernels.empty() || s.kernel->origin == Origin::plugin)
      counted.emplace_back(std::string(s.kernel->name), s.rows);
    else
      table.add(s.rows);
  }
  if (!table.nothing_judged() || counted.size() == summaries.size()) return counted;
  counted.emplace_back("every kernel of the table", table);
  return counted;
}

int run_check(CheckOptions options) {
  // Before any plugin's constructor runs (it may chdir()): plugin_option.h.
  options.input = absolute_path(options.input);
  resolve_plugin_paths(options.plugins);
  load_plugins(options.plugins);
  ProblemFile file;
  try {
    file = read_problem_file(options.input);
  } catch (const RowFileError& e) {
    throw UsageError(e.what());
  }
  const bool whole = file.whole && file.op.has_value();
  float eps = 1e-5f;
  if (whole && !options.eps_text.empty())
    throw UsageError("--eps: the problem file " + options.input + " sets eps (nc.eps)");
  if (whole) eps = file.problems.front().eps;
  if (!options.eps_text.empty()) {
    try {
      eps = parse_float_token(options.eps_text);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--eps: " + std::string(e.what()));
    }
    if (!(eps >= 0) || std::isinf(eps)) throw UsageError("--eps must be finite and >= 0, got " + options.eps_text);
  }
  const std::vector<const Kernel*> kernels = select_kernels(options, file);
  if (kernels.empty() && whole && file.spec) throw UsageError(no_kernel_for(file, !options.plugins.paths.empty()));
  if (kernels.empty())
    throw UsageError(std::string(options.plugins.paths.empty() ? "no kernel in the table" : "no kernel of the plugins") +
                     (whole ? " for the problem file's op and dtype"
                            : " for --op " + (options.op.empty() ? std::string("layernorm") : options.op)));
  const fuzz::IsolationOptions isolation = isolation_options(options.plugins);

  std::vector<KernelSummary> summaries;
  for (const Kernel* k : kernels) {
    KernelSummary& s = summaries.emplace_back();
    s.kernel = k;
    s.facts.control = k->origin == Origin::control;
  }

  // The problems: the file's one, or one per row of a plain file (dy drawn).
  std::vector<std::pair<Problem, int64_t>> problems;  // with the line it starts on
  if (whole) {
    problems.emplace_back(file.problems.front(), 1);
  } else {
    std::vector<ParsedRow> rows;
    try {
      rows = read_row_file(options.input);
    } catch (const RowFileError& e) {
      throw UsageError(e.what());
    }
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
      problems.emplace_back(std::move(problem), row.line);
    }
  }

  for (const auto& [problem, line] : problems) {
    for (KernelSummary& s : summaries) {
      Problem run = problem;
      if (!is_backward(s.kernel->op)) run.dy.clear();
      const fuzz::CaseResult r = fuzz::run_case(*s.kernel, run, isolation);
      count_case(s.rows, r);
      if (!r.finished) {  // crash or hang: no evaluation
        s.facts.ran = true;
        s.facts.add_label(r.label);
        s.pass = false;
        s.max_ratio = INFINITY;
        if (s.label.empty()) s.label = r.label, s.detail = r.detail, s.worst_line = line;
        continue;
      }
      const Evaluation& e = r.evaluation;
      if (!e.declined.empty()) continue;
      s.facts.ran = true;
      s.facts.add_label(r.label);
      // NaN sticks: std::max keeps its first argument when the second is NaN
      s.max_ulp = std::isnan(s.max_ulp) ? s.max_ulp : std::max(ulp_figure(e, e.max_ulp), s.max_ulp);
      s.max_ulp_elementwise = std::isnan(s.max_ulp_elementwise)
                                  ? s.max_ulp_elementwise
                                  : std::max(ulp_figure(e, e.max_ulp_elementwise), s.max_ulp_elementwise);
      s.tight_rows += e.tight_rows;
      s.max_tight = std::max(s.max_tight, e.max_error_over_tight);
      s.exact_math_ulp = std::isnan(s.exact_math_ulp) ? s.exact_math_ulp
                                                      : std::max(ulp_figure(e, e.exact_math_ulp), s.exact_math_ulp);
      s.policy_exact_math_ulp = std::max(s.policy_exact_math_ulp, e.policy_exact_math_ulp);
      if (!r.label.empty()) {
        s.pass = false;
        if (s.label.empty()) s.label = r.label, s.detail = r.detail;
      }
      const bool worse = e.max_error_over_bound > s.max_ratio || std::isnan(e.max_error_over_bound) ||
                         (!r.label.empty() && s.worst_line == 0);
      if (worse) {
        s.max_ratio = std::isnan(e.max_error_over_bound) ? INFINITY : e.max_error_over_bound;
        s.worst = e.worst;
        s.worst_line = line;
      }
    }
  }
  const std::size_t row_count = problems.size();
  // A library that changes the floating-point control state when it loads:
  // a finding on each of its kernels checked, unless a worse one is there.
  for (KernelSummary& s : summaries) {
    const fuzz::HostedPlugin* plugin = fuzz::hosted_plugin_of(*s.kernel);
    const std::string change = plugin ? plugin->load_fp_change() : std::string();
    if (change.empty() || !(s.label.empty() || s.label == "nan" || s.label == "accuracy")) continue;
    s.pass = false;
    s.facts.add_label("fp_environment");
    s.label = "fp_environment";
    s.detail = "the library changes the floating-point control state when it loads (" + change +
               "); its kernels run, and are judged, in that state";
  }

  // A kernel none of whose rows was judged has no verdict: it does not pass.
  for (KernelSummary& s : summaries)
    if (s.rows.nothing_judged()) s.pass = false;
  const bool all_pass = std::all_of(summaries.begin(), summaries.end(), [](const auto& s) {
    return s.pass || s.rows.nothing_judged();
  });
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
                          {"rows", s.rows.judged},
                          {"declined_rows", s.rows.declined},
                          {"max_ulp", json_number(s.max_ulp)},
                          {"max_ulp_elementwise", json_number(s.max_ulp_elementwise)},
                          {"max_error_over_bound", json_number(s.max_ratio)},
                          {"tight_rows", s.tight_rows},
                          {"max_error_over_tight", json_number(s.max_tight)},
                          {"pass", s.pass},
                          {"grade", report::to_string(report::grade(s.facts))}};
      if (s.rows.declined) k["declined_reason"] = s.rows.first_decline;
      if (s.kernel->spec) {
        k["spec"] = to_text(*s.kernel->spec);
        k["exact_math_ulp"] = json_number(s.exact_math_ulp);
        k["policy_exact_math_ulp"] = json_number(s.policy_exact_math_ulp);
      }
      if (!s.label.empty()) k["label"] = s.label, k["detail"] = s.detail;
      if (s.worst_line)
        k["worst"] = {{"line", s.worst_line},       {"output", s.worst.output},
                      {"col", s.worst.col},         {"computed", json_number(s.worst.computed)},
                      {"exact", json_number(s.worst.exact)}, {"allowed", json_number(s.worst.allowed)}};
      out["kernels"].push_back(std::move(k));
    }
    std::cout << json_safe(out).dump(2) << "\n";  // paths are bytes: json_text.h
  } else {
    if (whole)
      std::printf("one %lld x %lld %s problem from %s, eps = %g\n\n",
                  static_cast<long long>(problems.front().first.rows),
                  static_cast<long long>(problems.front().first.cols), std::string(to_string(*file.op)).c_str(),
                  options.input.c_str(), static_cast<double>(eps));
    else
      std::printf("%zu rows from %s, eps = %g, dy for backward kernels: N(0,1) with --seed %llu\n\n",
                  row_count, options.input.c_str(), static_cast<double>(eps),
                  static_cast<unsigned long long>(options.seed));
    std::printf("%-34s %-14s %6s %10s %10s %14s  %-8s  %s\n", "kernel", "op", "rows", "ulp(scale)", "ulp(elem)",
                "max_err/bound", "verdict", "grade");
    for (const KernelSummary& s : summaries) {
      const std::string name(s.kernel->name);
      const std::string op(to_string(s.kernel->op));
      std::printf("%-34s %-14s %6lld %10.4g %10.4g %14.4g  %-8s  %s\n", name.c_str(), op.c_str(),
                  static_cast<long long>(s.rows.judged), s.max_ulp, s.max_ulp_elementwise, s.max_ratio,
                  s.rows.nothing_judged() ? "declined" : (s.pass ? "pass" : "FAIL"),
                  std::string(report::to_string(report::grade(s.facts))).c_str());
      if (s.kernel->spec && !s.rows.nothing_judged() && s.kernel->spec->direction == Direction::bwd)
        std::printf("    spec %s: held to its op's backward bound%s\n", to_text(*s.kernel->spec).c_str(),
                    s.kernel->spec->from_y ? ", plus what reading y rounded to its format costs dx and dgamma" : "");
      else if (s.kernel->spec && !s.rows.nothing_judged() && s.kernel->spec->quant) {
        const Quantization& q = *s.kernel->spec->quant;
        const std::string also = std::string(q.dynamic() ? ", the scale to its range" : "") +
                                 (q.apply == ScaleApply::multiply ? ", scale_inv to fl32(1 / scale)" : "") +
                                 (q.amax ? ", the amax to its range" : "");
        std::printf("    spec %s: each code held to the codes its policy admits under the scale it was cast by%s; "
                    "codes from exact math's %.3g (the policy's own: %.3g)\n",
                    to_text(*s.kernel->spec).c_str(), also.c_str(), s.exact_math_ulp, s.policy_exact_math_ulp);
      }
      else if (s.kernel->spec && !s.rows.nothing_judged())
        std::printf("    spec %s: held to its rounding policy; y against exact math %.3g ULPs of the row's scale, "
                    "%.3g elementwise (the policy's own result: %.3g of the row's scale)\n",
                    to_text(*s.kernel->spec).c_str(), s.exact_math_ulp, s.max_ulp_elementwise,
                    s.policy_exact_math_ulp);
      if (s.tight_rows)
        std::printf("    tight standard on %lld realistic rows: worst %.3gx (docs/accuracy.md)\n",
                    static_cast<long long>(s.tight_rows), s.max_tight);
      if (!s.label.empty()) std::printf("    %s: %s\n", s.label.c_str(), s.detail.c_str());
      if (!s.pass && !s.worst.output.empty() && s.max_ratio > 1)
        std::printf("    worst: line %lld, %s[%lld] = %a, exact %a, allowed error %.3g\n",
                    static_cast<long long>(s.worst_line), s.worst.output.c_str(),
                    static_cast<long long>(s.worst.col), static_cast<double>(s.worst.computed),
                    s.worst.exact, s.worst.allowed);
      if (s.rows.declined) std::printf("    %s\n", s.rows.declined_text("rows").c_str());
    }
  }
  return exit_code(unjudged_that_count(summaries, options), all_pass ? kExitOk : kExitFinding, "rows");
}

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CheckOptions>();
  auto* sub = app.add_subcommand("check", "Run kernels on the rows of a file and hold them to their bounds");
  sub->add_option("--input", options->input, "Row file: one row per line (see docs/cli.md)")->required();
  sub->add_option("--op", options->op, "Which kernels run when no --kernel is named (default layernorm; with --plugin, every plugin kernel)")
      ->check(CLI::IsMember({"layernorm", "rmsnorm"}));
  sub->add_option("--eps", options->eps_text, "eps (decimal or hex-float, >= 0; default 1e-5; a problem file sets its own)");
  add_plugin_options(sub, options->plugins, true);
  sub->add_option("--kernel", options->kernels, "Run only this kernel (repeatable; default: all of --op)");
  sub->add_option("--seed", options->seed_text, "Seed of the dy drawn for backward kernels (default 1)");
  sub->add_flag("--json", options->json, "Print one JSON document");
  sub->callback([&action, options] { action = [options] {
    if (!options->seed_text.empty()) options->seed = parse_seed(options->seed_text);
    return run_check(*options);
  }; });
}

}  // namespace normcheck::cli
