// `normcheck judge DIR [--json]`: the verdict on each case of DIR (written
// by `normcheck gen`, case_files.h) from the outputs a harness wrote beside
// its inputs. Each case's outputs are the computation of a kernel row
// (recorded_kernel.h) that evaluate() runs and judges as it judges every
// kernel: each output against the admissible range of the spec's rounding
// policy, y against exact math beside it.
// A finding prints the output, row, column, values and allowance, and saves
// the problem as case-NNN.finding.txt, a problem file `normcheck check`
// replays on a kernel of the spec (--plugin).
// With --report OUT, the harness is also written as a kernel row of the
// report `normcheck report` writes (reports/judged_report.h): report.html,
// report.md, results.json, junit.xml, and findings/ with each finding's
// problem file.
// Exit 0: every case passes; 1: a finding; 2: bad input (no cases, a missing,
// truncated or malformed file, a tensor missing or of the wrong dtype or
// shape: each message names the file and the tensor, on stderr; nothing on
// stdout, as everywhere; no report is written), or an OUT that cannot be a
// folder.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "accuracy_baseline.h"
#include "baseline_options.h"
#include "case_files.h"
#include "command.h"
#include "isolation.h"
#include "json_number.h"
#include "json_text.h"
#include "judged_report.h"
#include "normcheck/evaluate.h"
#include "normcheck/io.h"
#include "normcheck/row_file.h"
#include "recorded_kernel.h"
#include "shell_quote.h"
#include "verdict.h"
#include "writers.h"

namespace normcheck::cli {
namespace {

namespace fs = std::filesystem;

struct JudgeArgs {
  std::string dir;
  bool json = false;
  std::string report;  // --report OUT; empty: none
  // The accuracy baseline of cases written by gen --accuracy-rows
  // (fuzz/accuracy_baseline.h): held to, or rewritten; the harness's name in it.
  BaselineOptions baseline;
  std::string name = kHarnessKernelName;
};

struct CaseVerdict {
  fs::path inputs;
  int64_t index = -1;
  std::string spec;
  uint64_t seed = 0;
  OpSpec op_spec;
  std::string domain;  // the domain text of its metadata
  std::string input_class;  // gen --accuracy-rows: the class whose realistic rows the case is; else empty
  Problem problem;
  std::string bad_input;  // non-empty: the case could not be judged, and why
  std::string label;      // the finding (isolation.h's labels), empty when it passed
  Evaluation evaluation;
  fs::path finding_file;     // with a finding: where its problem file goes
  std::string finding_text;  // and what it holds (written once every case was judged)
};

// The inputs files of dir, in name order.
std::vector<fs::path> input_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(dir.string() + ": not a directory");
  std::vector<fs::path> out;
  const std::string suffix = ".inputs.safetensors";
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("case-", 0) == 0 && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  if (ec) throw UsageError(dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  if (out.empty()) throw UsageError(dir.string() + ": no case-NNN.inputs.safetensors (normcheck gen writes them)");
  return out;
}

using report::worst_text;

// " tight F" beside a forward case's bound figure when a row was held to the
// tight standard (docs/accuracy.md), else "".
std::string tight_text(const Evaluation& e) {
  if (e.tight_rows == 0) return {};
  char text[40];
  std::snprintf(text, sizeof text, " tight %-8.4g", e.max_error_over_tight);
  return text;
}

CaseVerdict judge_case(const fs::path& dir, const fs::path& inputs_path) {
  CaseVerdict v;
  v.inputs = inputs_path;
  CaseInputs in;
  fold::TensorFile outputs;
  try {
    in = read_inputs(inputs_path);
    v.index = in.index, v.spec = to_text(in.spec), v.seed = in.seed;
    v.op_spec = in.spec, v.domain = in.domain, v.problem = in.problem, v.input_class = in.input_class;
    if (inputs_path.filename() != inputs_file_name(in.index))
      throw CaseFileError(inputs_path.string() + ": its metadata says case " + std::to_string(in.index) +
                          ", whose file is " + inputs_file_name(in.index));
    outputs = read_outputs(dir / outputs_file_name(in.index), in);
  } catch (const CaseFileError& e) {
    v.bad_input = e.what();
    return v;
  }
  InputRange domain;
  try {
    domain = parse_domain(in.domain);
  } catch (const std::invalid_argument& e) {
    v.bad_input = inputs_path.string() + ": __metadata__ 'normcheck.domain': " + e.what();
    return v;
  }
  const RecordedKernel kernel(in.spec, domain, outputs);
  try {
    v.evaluation = evaluate(kernel.row(), in.problem);
  } catch (const std::invalid_argument& e) {
    v.bad_input = inputs_path.string() + ": " + e.what();
    return v;
  }
  if (!v.evaluation.declined.empty()) {
    v.bad_input = inputs_path.string() + ": the inputs are outside the domain they declare: " +
                  v.evaluation.declined;
    return v;
  }
  v.label = fuzz::label_of(v.evaluation, false);
  if (!v.label.empty()) {
    v.finding_file = dir / finding_file_name(in.index);
    const std::vector<std::string> notes = {
        "normcheck judge: " + v.label + " on " + inputs_path.filename().string() + " (seed " +
            std::to_string(in.seed) + ", case " + std::to_string(in.index) + ")",
        beyond_tight_only(v.evaluation) ? "beyond the tight standard on a realistic row: " + worst_text(v.evaluation.tight_worst)
                                        : "worst: " + worst_text(v.evaluation.worst),
        "replay on a kernel of the spec: normcheck check --input " + v.finding_file.filename().string() +
            " --plugin LIBRARY"};
    v.finding_text = problem_file_text(op_of(in.spec), in.spec.dtype_of(TensorName::x), in.problem, notes,
                                       kHarnessKernelName, &in.spec);
  }
  return v;
}

// Each case's finding file is this run's finding: written for a finding, and
// one left by an earlier run removed when the case passes.
void write_finding_files(const fs::path& dir, const std::vector<CaseVerdict>& verdicts) {
  for (const CaseVerdict& v : verdicts) {
    if (!v.finding_file.empty()) {
      write_file_atomically(v.finding_file, v.finding_text);
    } else {
      std::error_code ignored;  // absent is the usual case
      fs::remove(dir / finding_file_name(v.index), ignored);
    }
  }
}

std::string case_name(const CaseVerdict& v) {
  const std::string name = v.inputs.filename().string();
  return name.substr(0, name.find('.'));
}

// The report of the harness (reports/judged_report.h): one kernel row per
// spec and domain the cases declare (one, for a folder gen wrote), each case a
// problem of its row, each finding's problem file copied into the report's
// findings/. Returns report.html's path.
fs::path write_judged_report(const fs::path& out, const fs::path& findings, const fs::path& dir,
                             const std::vector<CaseVerdict>& verdicts, double seconds) {
  std::deque<OpSpec> specs;           // the rows' specs, which the rows point to
  std::deque<Kernel> rows;
  std::deque<std::string> names;      // the rows' names, which Kernel::name views
  std::map<std::string, std::size_t> row_of;  // spec text + domain -> kernel
  std::vector<report::JudgedKernel> kernels;
  std::set<std::string> keys;
  for (const CaseVerdict& v : verdicts) keys.insert(v.spec + "\n" + v.domain);
  for (const CaseVerdict& v : verdicts) {
    const std::string key = v.spec + "\n" + v.domain;
    auto it = row_of.find(key);
    if (it == row_of.end()) {
      specs.push_back(v.op_spec);
      rows.push_back(harness_row(specs.back(), parse_domain(v.domain)));
      names.push_back(keys.size() == 1 ? std::string(kHarnessKernelName)
                                       : std::string(kHarnessKernelName) + " (" + v.spec + ")");
      rows.back().name = names.back();
      it = row_of.emplace(key, kernels.size()).first;
      kernels.push_back({&rows.back(), {}});
    }
    report::JudgedProblem p;
    p.name = case_name(v), p.problem = v.problem, p.evaluation = v.evaluation;
    if (!v.label.empty()) {
      fs::create_directories(findings);
      const fs::path saved = findings / v.finding_file.filename();
      fs::copy_file(v.finding_file, saved, fs::copy_options::overwrite_existing);
      p.label = v.label;
      p.problem_file = "findings/" + saved.filename().string();
      p.replay = "normcheck check --input " + shell_quote(p.problem_file) + " --plugin LIBRARY";
    }
    kernels[it->second].problems.push_back(std::move(p));
  }
  std::set<uint64_t> seeds;
  for (const CaseVerdict& v : verdicts) seeds.insert(v.seed);
  std::string source = std::to_string(verdicts.size()) + " cases of " + dir.string() +
                       ", written by normcheck gen and judged from a harness's outputs by normcheck judge";
  if (seeds.size() > 1) {
    source += "; drawn with the seeds";
    for (const uint64_t seed : seeds) source += " " + std::to_string(seed);
  }
  report::ReportData data = report::judged_report_data(std::move(kernels), *seeds.begin(), source);
  data.seconds = seconds;
  report::write_report(out, data, report::verdicts(data), std::nullopt, findings);
  return fs::absolute(out / "report.html").lexically_normal();
}

// The figures of the judged cases by input class, held to or written to the
// baseline (--check-baseline, --update-baseline): the cases must be gen
// --accuracy-rows's, of one seed, the baseline's.
struct BaselineRun {
  fuzz::AccuracyRun run;
  std::optional<fuzz::AccuracyComparison> comparison;
  std::vector<const fuzz::AccuracyFigure*> failed;
  bool written = false;
};

std::optional<BaselineRun> hold_to_baseline(const JudgeArgs& args, const std::optional<fuzz::AccuracyRun>& baseline,
                                            const std::vector<CaseVerdict>& verdicts) {
  if (!args.baseline.any()) return std::nullopt;
  std::set<uint64_t> seeds;
  for (const CaseVerdict& v : verdicts) {
    if (v.input_class.empty())
      throw UsageError(v.inputs.string() + " has no input class (__metadata__ 'normcheck.input_class'): a baseline "
                       "holds the realistic rows `normcheck gen --accuracy-rows` writes");
    seeds.insert(v.seed);
  }
  if (seeds.size() != 1) throw UsageError(args.dir + ": the cases were written with more than one seed");
  BaselineRun b;
  b.run.seed = *seeds.begin();
  if (baseline && baseline->seed != b.run.seed)
    throw UsageError(args.baseline.check + " was measured with seed " + std::to_string(baseline->seed) +
                     ", the cases in " + args.dir + " were written with seed " + std::to_string(b.run.seed) +
                     ": write them with gen --accuracy-rows --seed " + std::to_string(baseline->seed));
  fuzz::AccuracyTally tally(args.name);
  for (const CaseVerdict& v : verdicts) {
    fuzz::CaseResult r;
    r.evaluation = v.evaluation;
    r.finished = true;
    r.label = v.label;
    tally.add(v.input_class, r);
  }
  b.run.figures = tally.figures();
  b.failed = fuzz::failed_classes(b.run.figures);
  if (baseline) b.comparison = fuzz::compare_accuracy(*baseline, b.run, args.baseline.worse_by);
  return b;
}

int run_judge(const JudgeArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const std::optional<fuzz::AccuracyRun> baseline = read_baseline_options(args.baseline);
  const fs::path dir = args.dir;
  // an OUT that cannot be a folder is bad usage, found before any case is judged;
  // it is made only once every case could be judged
  if (!args.report.empty()) check_report_folder_or_usage(args.report);
  std::vector<CaseVerdict> verdicts;
  for (const fs::path& inputs : input_files(dir)) verdicts.push_back(judge_case(dir, inputs));
  int64_t passed = 0, findings = 0, bad = 0;
  for (const CaseVerdict& v : verdicts) (v.bad_input.empty() ? (v.label.empty() ? passed : findings) : bad) += 1;
  // bad input: every reason on stderr, nothing on stdout, no file written (docs/cli.md)
  if (bad) {
    for (const CaseVerdict& v : verdicts)
      if (!v.bad_input.empty()) std::cerr << "normcheck: " << v.bad_input << "\n";
    std::cerr << "normcheck: " << bad << " of " << verdicts.size() << " cases could not be judged (the others: "
              << passed << " pass, " << findings << " with a finding)\n";
    return kExitUsage;
  }
  std::optional<BaselineRun> held = hold_to_baseline(args, baseline, verdicts);
  const fs::path findings_dir = args.report.empty() ? fs::path() : report_folder_or_usage(args.report);
  write_finding_files(dir, verdicts);
  // A baseline records a harness whose every case passed.
  if (held && !args.baseline.update.empty() && findings == 0) {
    write_file_atomically(args.baseline.update, fuzz::format_accuracy_baseline(held->run));
    held->written = true;
  }
  const bool worse = held && held->comparison && !held->comparison->worse.empty();
  const int exit_code = findings || worse ? kExitFinding : kExitOk;
  const fs::path report_page =
      args.report.empty()
          ? fs::path()
          : write_judged_report(args.report, findings_dir, dir, verdicts,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

  if (args.json) {
    const auto worst_json = [](const Worst& w) -> nlohmann::json {
      return {{"output", w.output},           {"row", w.row},
              {"col", w.col},                 {"computed", json_number(w.computed)},
              {"exact", json_number(w.exact)}, {"allowed", json_number(w.allowed)}};
    };
    nlohmann::json cases = nlohmann::json::array();
    for (const CaseVerdict& v : verdicts) {
      nlohmann::json c = {{"case", case_name(v)}, {"inputs", v.inputs.string()}};
      const Evaluation& e = v.evaluation;
      c["verdict"] = v.label.empty() ? "pass" : "fail";
      c["spec"] = v.spec;
      c["seed"] = v.seed;
      c["max_error_over_bound"] = json_number(e.max_error_over_bound);
      c["tight_rows"] = e.tight_rows;
      c["max_error_over_tight"] = json_number(e.max_error_over_tight);
      c["exact_math_ulp"] = json_number(ulp_figure(e, e.exact_math_ulp));
      c["max_ulp_elementwise"] = json_number(ulp_figure(e, e.max_ulp_elementwise));
      c["policy_exact_math_ulp"] = json_number(e.policy_exact_math_ulp);
      if (!v.label.empty()) {
        c["label"] = v.label;
        if (beyond_tight_only(e)) c["tight_worst"] = worst_json(e.tight_worst);
        c["worst"] = worst_json(e.worst);
        c["consistent_policies"] = e.consistent_policies;
        c["consistent_casts"] = e.consistent_casts;
        c["problem_file"] = v.finding_file.string();
      }
      cases.push_back(std::move(c));
    }
    nlohmann::json doc = {{"dir", dir.string()}, {"cases", cases}, {"passed", passed}, {"findings", findings}};
    if (!report_page.empty()) doc["report"] = report_page.string();
    if (held) {
      nlohmann::json figures = nlohmann::json::array();
      for (const fuzz::AccuracyFigure& f : held->run.figures) figures.push_back(figure_json(f));
      nlohmann::json acc = {{"seed", held->run.seed}, {"name", args.name}, {"figures", figures},
                            {"written", held->written}};
      if (held->comparison) acc["baseline"] = comparison_json(*held->comparison, args.baseline);
      doc["accuracy"] = acc;
    }
    std::cout << json_safe(doc).dump(2) << "\n";  // paths are bytes: json_text.h
    return exit_code;
  }
  std::set<uint64_t> seeds;
  for (const CaseVerdict& v : verdicts) seeds.insert(v.seed);
  std::printf("%zu cases in %s, drawn with seed", verdicts.size(), dir.string().c_str());
  for (const uint64_t seed : seeds) std::printf(" %llu", static_cast<unsigned long long>(seed));
  std::printf(" (normcheck gen)\n\n");
  for (const CaseVerdict& v : verdicts) {
    const Evaluation& e = v.evaluation;
    if (v.op_spec.direction == Direction::bwd)  // no y: dx, dgamma, dbeta against their exact values
      std::printf("%s  %-4s  max_err/bound %-10.4g largest error %.3g ULPs of the row's scale, %.3g elementwise "
                  "(dx, dgamma, dbeta)  %s\n",
                  case_name(v).c_str(), v.label.empty() ? "pass" : "FAIL", e.max_error_over_bound,
                  ulp_figure(e, e.max_ulp), ulp_figure(e, e.max_ulp_elementwise), v.spec.c_str());
    else
      std::printf("%s  %-4s  max_err/bound %-10.4g%s y vs exact math %.3g ULPs of the row's scale, %.3g elementwise "
                  "(the policy's own: %.3g)  %s\n",
                  case_name(v).c_str(), v.label.empty() ? "pass" : "FAIL", e.max_error_over_bound,
                  tight_text(e).c_str(), ulp_figure(e, e.exact_math_ulp), ulp_figure(e, e.max_ulp_elementwise),
                  e.policy_exact_math_ulp, v.spec.c_str());
    if (v.label.empty()) continue;
    if (beyond_tight_only(e))
      std::printf("    %s: beyond the tight standard on a realistic row: %s\n", v.label.c_str(),
                  worst_text(e.tight_worst).c_str());
    else
      std::printf("    %s: %s\n", v.label.c_str(), worst_text(e.worst).c_str());
    if (const std::string hint = fuzz::spec_hint(e, v.label); !hint.empty()) std::printf("    %s\n", hint.c_str());
    for (const std::string& p : e.consistent_policies) std::printf("    consistent with the policy: %s\n", p.c_str());
    for (const std::string& p : e.consistent_casts) std::printf("    its codes follow the cast of: %s\n", p.c_str());
    std::printf("    problem file: %s\n", v.finding_file.string().c_str());
  }
  std::printf("\n%zu cases: %lld pass, %lld with a finding\n", verdicts.size(), static_cast<long long>(passed),
              static_cast<long long>(findings));
  if (held) {
    std::printf("\n%s by input class (seed %llu):\n%s", args.name.c_str(),
                static_cast<unsigned long long>(held->run.seed), fuzz::format_figures(held->run.figures).c_str());
    if (held->comparison)
      std::printf("\n%s",
                  fuzz::format_comparison(*held->comparison, args.baseline.check, args.baseline.worse_by).c_str());
    if (held->written) std::printf("\nbaseline written to %s\n", args.baseline.update.c_str());
    else if (!args.baseline.update.empty()) std::printf("\nbaseline not written: a case has a finding\n");
  }
  if (!report_page.empty()) std::printf("report: %s\n", report_page.string().c_str());
  return exit_code;
}

}  // namespace

void add_judge_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("judge", "The verdicts on the outputs a harness wrote for the cases of `normcheck gen`");
  auto args = std::make_shared<JudgeArgs>();
  sub->add_option("dir", args->dir, "The directory gen wrote, with the harness's case-NNN.outputs.safetensors")
      ->required();
  sub->add_flag("--json", args->json, "Print one JSON document");
  sub->add_option("--report", args->report,
                  "Also write the report of the harness, as `normcheck report` writes it, to this folder "
                  "(report.html, report.md, results.json, junit.xml, findings/)");
  add_baseline_options(sub, args->baseline, "the cases' figures by input class (cases of gen --accuracy-rows)");
  sub->add_option("--name", args->name, "The harness's kernel name in the baseline file (default harness)");
  sub->callback([&action, args] { action = [args] { return run_judge(*args); }; });
}

}  // namespace normcheck::cli
