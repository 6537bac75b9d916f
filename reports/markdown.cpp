// report.md: the verdicts and the claims' table, short enough for a pull
// request comment or a CI job summary.
#include <sstream>

#include "writers.h"

namespace normcheck::report {
namespace {

std::string cell(std::string s) {
  for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

}  // namespace

std::string markdown_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                            const std::optional<BaselineCheck>& baseline_check) {
  std::ostringstream s;
  s << "# normcheck report\n\n"
    << workload_name(data) << ", seed " << data.seed
    << (data.judged.empty() ? " (`--seed` or NORMCHECK_SEED), " : " (the problems' seed), ") << "SIMD target "
    << data.simd_target << ", " << figure(data.seconds) << " s, started " << data.started_utc
    << (data.judged.empty() ? "." : ". ") << (data.judged.empty() ? std::string() : workload_sentence(data)) << "\n\n"
    << (data.quick && data.bench ? "Quick run: the bench's speeds are a smoke test (small shapes, short samples), "
                                   "not figures to quote.\n\n"
                                 : "")
    << "Grade: trusted (within its bound everywhere), less accurate (breaks it, by at most "
    << static_cast<long long>(kWrongFactor) << "x on realistic rows), wrong (NaN/inf where the exact result is finite, outputs that "
       "differ run to run, or beyond that factor on realistic rows), unsafe (memory, floating-point state, crash or "
       "hang); error/bound is what to act on (1 = the bound it is held to). Speed: median ratio to the streaming "
       "limit of the kernel's direction (reading its inputs and writing its output with non-temporal stores, "
       "measured in the same run) and to oneDNN, over the shapes out of cache (bytes moved per call >= "
    << figure(bench::kOutOfCacheFactor) << "x the last-level cache), where it is the fraction of possible. "
    << speed_scope(data) << "\n\n"
    << "| kernel | origin | grade | rows failed / run / declined | worst error/bound | max ULP | vs limit | vs oneDNN |\n"
    << "|---|---|---|---|---|---|---|---|\n";
  for (const KernelVerdict& v : verdicts)
    s << "| `" << v.kernel->name << "` | " << to_string(v.kernel->origin) << " | " << to_string(v.grade) << " | "
      << v.rows_failed << " / " << v.rows_run << " / " << v.rows_declined << " | " << figure(v.worst_ratio) << " | "
      << figure(v.max_ulp) << " | " << ratio_text(v.stream_ratio, "-") << " | " << ratio_text(v.onednn_ratio, "-") << " |\n";
  s << "\nMax ULP is taken against the row's scale: where an exact value is tiny against it, the error counts "
       "in ULPs of the scale, so a large figure is a large error, not an output near zero; report.html says where.\n";
  // Each forward norm's two verdicts: its grade judges it against its rounding
  // policy; the figures say how far its y and its policy's own are from exact math.
  bool policies = false;
  for (const KernelVerdict& v : verdicts) {
    if (v.policy.empty() || !v.exact_math_ulp) continue;
    if (!policies)
      s << "\n## Rounding policies\n\n"
           "| kernel | policy (its spec) | against its policy | y against exact math (ULP) | its policy's own y (ULP) |\n"
           "|---|---|---|---|---|\n";
    policies = true;
    const std::string unit = v.quantized ? " codes" : "";
    s << "| `" << v.kernel->name << "` | `" << v.policy << "`" << (v.policy_name.empty() ? "" : " (" + cell(v.policy_name) + ")")
      << " | " << to_string(v.grade) << (v.scale_ratio ? "; scale " + figure(*v.scale_ratio) + " of its range" : "")
      << " | " << figure(*v.exact_math_ulp) << unit << " | " << figure(*v.policy_exact_math_ulp) << unit << " |\n";
  }
  if (policies)
    s << "\nULPs of y's format, against y's row scale (docs/semantics.md, \"Metrics\"): a kernel within its policy is "
         "as far from exact math as that policy makes it (docs/ops.md). A quantized y counts codes: how far its codes "
         "are from those exact math casts to; its dynamic scale's worst error is a fraction of its range's reach "
         "(docs/accuracy_quantized.md).\n";
  // Kept short for a pull-request comment: the kernels that need more than
  // their table row (failures, declines, controls); report.html has them all.
  bool heading = false;
  for (const KernelVerdict& v : verdicts) {
    if (v.grade == Grade::trusted && v.rows_declined == 0) continue;
    if (!heading) s << "\n## Kernels to read about\n\n";
    heading = true;
    s << "- **" << v.kernel->name << "** (" << to_string(v.grade) << "): " << v.headline << "\n";
    for (const std::string& n : v.notes)
      if (n.rfind("Max ULP", 0) != 0 && n.rfind("Fuzzing", 0) != 0) s << "  - " << n << "\n";
  }
  if (data.fuzz) {
    s << "\n## Fuzzing\n\n" << fuzz_summary(data)
      << ". One finding per kernel, label and input class, each shrunk within its class and saved in `findings/`, "
         "and measured on realistic rows of its class.\n";
    if (!data.fuzz->result.findings.empty())
      s << "\n| kernel | origin | found | input class | problem | error/bound | on realistic rows | replay |\n"
           "|---|---|---|---|---|---|---|---|\n";
    for (const KernelVerdict& v : verdicts)
      for (const fuzz::Finding* f : v.fuzz_findings)
        s << "| `" << f->kernel << "` | " << to_string(v.kernel->origin) << " | " << f->label << " | "
          << cell(finding_class_text(*f)) << " | " << finding_shape(*f) << " | "
          << cell(fuzz::ratio_text(f->label, f->error_over_bound, f->error_over_tight)) << " | "
          << cell(f->severity ? fuzz::severity_text(*f->severity) : "") << " | `" << cell(replay_command(*f))
          << "` |\n";
  }
  if (data.judged.empty()) {  // judged kernels' reports have no claims
    s << "\n## Claims\n\n| id | verdict | figure | source |\n|---|---|---|---|\n";
    for (const ClaimRun& c : data.claims)
      s << "| " << c.claim->id << " | " << to_string(c.result.verdict) << " | " << cell(c.result.figure) << " | "
        << cell(std::string(c.claim->source)) << " |\n";
  }
  if (baseline_check) {
    s << "\n## Accuracy baseline\n\n";
    if (baseline_check->regressions.empty()) s << "No kernel got worse than the baseline.\n";
    for (const Regression& r : baseline_check->regressions)
      s << "- **" << r.kernel << "** " << r.output << ": " << r.metric << " " << figure(r.before) << " -> "
        << figure(r.after) << " on " << r.input << "\n";
    for (const std::string& n : baseline_check->notes) s << "- note: " << n << "\n";
  }
  s << "\nFull report with plots: report.html; every figure: results.json.\n";
  return s.str();
}

}  // namespace normcheck::report
