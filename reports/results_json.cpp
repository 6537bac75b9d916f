// results.json. Figures that JSON cannot hold (inf, NaN) are null, as in every
// --json output of the CLI (json_number.h).
#include "results_json.h"

#include "bench_json.h"
#include "claim_json.h"
#include "finding_json.h"
#include "json_number.h"

namespace normcheck::report {
namespace {

using cli::json_number;
using nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json_number(*v) : json(nullptr); }

json row_json(const RowResult& r) {
  const Evaluation& e = r.evaluation;
  json j = {{"family", r.family},
            {"d", r.d},
            {"rows", r.rows},
            {"index", r.index},
            {"eps", r.eps},
            {"affine", r.affine},
            {"mean_over_sigma", json_number(r.mean_over_sigma)},
            {"max_abs_x", json_number(r.max_abs_x)},
            {"rstd", json_number(r.rstd)},
            {"declined", e.declined.empty() ? json(nullptr) : json(e.declined)}};
  if (e.declined.empty()) {
    j["pass"] = e.pass;
    j["max_ulp"] = json_number(ulp_figure(e, e.max_ulp));
    j["max_ulp_elementwise"] = json_number(ulp_figure(e, e.max_ulp_elementwise));
    j["max_error_over_bound"] = json_number(e.max_error_over_bound);
    j["tight_rows"] = e.tight_rows;
    j["max_error_over_tight"] = json_number(e.max_error_over_tight);
    j["worst_output"] = e.worst.output;
    j["nonfinite_mismatch"] = e.nonfinite_mismatch;
    j["memory_fault"] = e.out_of_bounds_write || e.wrote_input || e.unwritten_output;
  }
  if (!r.problem_file.empty()) {  // a judged problem's finding (judged_report.h)
    j["label"] = r.finding_label;
    j["problem_file"] = r.problem_file;
    j["replay"] = r.replay;
  }
  return j;
}

json row_ref(const RowResult* r) {
  if (!r) return nullptr;
  return {{"family", r->family}, {"d", r->d}, {"index", r->index}, {"eps", r->eps}, {"affine", r->affine}};
}

json kernel_json(const KernelAccuracy& ka, const KernelVerdict& v) {
  json outputs = json::array();
  for (const OutputWorst& w : output_worsts(ka))
    outputs.push_back({{"output", w.output},
                       {"max_error_over_bound", json_number(w.max_error_over_bound)},
                       {"max_ulp", json_number(w.max_ulp)},
                       {"ratio_row", row_ref(w.ratio_row)},
                       {"ulp_row", row_ref(w.ulp_row)}});
  json rows = json::array();
  for (const RowResult& r : ka.rows) rows.push_back(row_json(r));
  json declines = json::array();
  for (const Count& c : v.decline_reasons) declines.push_back({{"reason", c.what}, {"rows", c.rows}});
  json failing = json::array();
  for (const Count& c : v.failing_families) failing.push_back({{"family", c.what}, {"rows", c.rows}});
  return {{"name", ka.kernel->name},
          {"op", to_string(ka.kernel->op)},
          {"origin", to_string(ka.kernel->origin)},
          {"dtype", to_string(ka.kernel->dtype)},
          {"algorithm", ka.kernel->algorithm},
          {"rows", v.rows_run},
          {"rows_declined", v.rows_declined},
          {"rows_failed", v.rows_failed},
          {"max_ulp", json_number(v.max_ulp)},
          {"max_error_over_bound", json_number(v.worst_ratio)},
          {"pass", v.rows_failed == 0},
          {"grade", to_string(v.grade)},
          {"bound", v.bound},
          {"policy", v.policy.empty() ? json(nullptr)
                                      : json{{"spec", v.policy},
                                             {"name", v.policy_name},
                                             {"exact_math_ulp", optional_number(v.exact_math_ulp)},
                                             {"policy_exact_math_ulp", optional_number(v.policy_exact_math_ulp)},
                                             {"unit", v.quantized ? "codes" : "ulp"},
                                             {"scale_max_error_over_bound", optional_number(v.scale_ratio)}}},
          {"realistic_worst_error_over_bound", v.realistic_worst ? json_number(*v.realistic_worst) : json(nullptr)},
          {"algorithm_bound", v.reimplementation ? json{{"kernel", v.reimplementation->name},
                                                        {"max_error_over_bound", json_number(v.algorithm_worst)},
                                                        {"rows_failed", v.algorithm_rows_failed}}
                                                  : json(nullptr)},
          {"headline", v.headline},
          {"advice", v.advice},
          {"notes", v.notes},
          {"failing_families", failing},
          {"declines", declines},
          {"worst", {{"output", v.worst_output}, {"row", row_ref(v.worst_row)}}},
          {"speed", {{"text", v.speed},
                     {"ratio_to_stream", optional_number(v.stream_ratio)},
                     {"ratio_to_copy", optional_number(v.copy_ratio)},
                     {"ratio_to_onednn", optional_number(v.onednn_ratio)},
                     {"shapes", v.bench_shapes},
                     {"in_cache", v.speed_in_cache}}},
          {"outputs", outputs},
          {"row_results", rows}};
}

json fuzz_json(const ReportData& data) {
  if (!data.fuzz) return nullptr;
  json findings = json::array();
  for (const fuzz::Finding& f : data.fuzz->result.findings) {
    findings.push_back({{"kernel", f.kernel},
                        {"label", f.label},
                        {"detail", f.detail},
                        {"op", to_string(f.op)},
                        {"dtype", to_string(f.dtype)},
                        {"rows", f.problem.rows},
                        {"cols", f.problem.cols},
                        {"input", "findings/" + f.file.filename().string()},
                        {"replay", replay_command(f)}});
    cli::add_finding_figures(findings.back(), f);
  }
  json beyond_cap = json::array();
  for (const auto& [kernel, cases] : data.fuzz->result.beyond_cap) beyond_cap.push_back({{"kernel", kernel}, {"cases", cases}});
  return {{"cases_per_kernel", data.fuzz->cases_per_kernel},
          {"cases", data.fuzz->result.cases},
          {"seconds", json_number(data.fuzz_seconds)},
          {"findings", findings},
          {"beyond_cap", beyond_cap}};
}

}  // namespace

json results_json(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                  const std::optional<BaselineCheck>& baseline_check) {
  json kernels = json::array();
  for (std::size_t i = 0; i < data.accuracy.size(); ++i) kernels.push_back(kernel_json(data.accuracy[i], verdicts[i]));
  json claims = json::array();
  for (const ClaimRun& c : data.claims) {
    json entry = cli::claim_json(*c.claim, c.result);
    entry["seconds"] = c.seconds;
    claims.push_back(entry);
  }
  json baseline = nullptr;
  if (baseline_check) {
    json regressions = json::array();
    for (const Regression& r : baseline_check->regressions)
      regressions.push_back({{"kernel", r.kernel}, {"op", r.op}, {"output", r.output}, {"metric", r.metric},
                             {"before", json_number(r.before)}, {"after", json_number(r.after)}, {"input", r.input}});
    baseline = {{"regressions", regressions}, {"notes", baseline_check->notes}};
  }
  json lengths = json::array();
  for (int64_t d : data.accuracy_options.lengths) lengths.push_back(d);
  return {{"schema", "normcheck-report"},
          {"schema_version", kResultsSchemaVersion},
          {"seed", data.seed},
          {"quick", data.quick},
          {"started_utc", data.started_utc},
          {"seconds", data.seconds},
          {"simd_target", data.simd_target},
          {"judged", data.judged.empty() ? json(nullptr) : json(data.judged)},
          {"workload", {{"lengths", lengths}, {"rows_per_family", data.accuracy_options.rows_per_family},
                        {"eps", {1e-5, 0.0}},
                        {"batch_rows", data.accuracy_options.batch_rows},
                        {"batch_d", data.accuracy_options.batch_d}}},
          {"timings", {{"accuracy_seconds", data.accuracy_seconds}, {"fuzz_seconds", data.fuzz_seconds},
                       {"claims_seconds", data.claims_seconds}, {"bench_seconds", data.bench_seconds}}},
          {"kernels", kernels},
          {"fuzz", fuzz_json(data)},
          {"claims", claims},
          {"bench", data.bench ? cli::bench_report_json(*data.bench) : json(nullptr)},
          {"baseline", baseline}};
}

}  // namespace normcheck::report
