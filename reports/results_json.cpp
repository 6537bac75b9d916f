// results.json. Figures that JSON cannot hold (inf, NaN) are null, as in every
// --json output of the CLI (json_number.h).
#include "results_json.h"

#include "json_number.h"
#include "workload.h"

namespace normcheck::report {
namespace {

using cli::json_number;
using nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json_number(*v) : json(nullptr); }

json row_json(const RowResult& r) {
  const Evaluation& e = r.evaluation;
  json j = {{"family", r.family},
            {"d", r.d},
            {"index", r.index},
            {"eps", r.eps},
            {"affine", r.affine},
            {"mean_over_sigma", json_number(r.mean_over_sigma)},
            {"max_abs_x", json_number(r.max_abs_x)},
            {"rstd", json_number(r.rstd)},
            {"declined", e.declined.empty() ? json(nullptr) : json(e.declined)}};
  if (e.declined.empty()) {
    j["pass"] = e.pass;
    j["max_ulp"] = json_number(e.max_ulp);
    j["max_error_over_bound"] = json_number(e.max_error_over_bound);
    j["worst_output"] = e.worst.output;
    j["nonfinite_mismatch"] = e.nonfinite_mismatch;
    j["memory_fault"] = e.out_of_bounds_write || e.wrote_input || e.unwritten_output;
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
          {"status", v.status},
          {"headline", v.headline},
          {"advice", v.advice},
          {"notes", v.notes},
          {"failing_families", failing},
          {"declines", declines},
          {"worst", {{"output", v.worst_output}, {"row", row_ref(v.worst_row)}}},
          {"speed", {{"text", v.speed},
                     {"ratio_to_copy", optional_number(v.copy_ratio)},
                     {"ratio_to_onednn", optional_number(v.onednn_ratio)},
                     {"shapes", v.bench_shapes}}},
          {"outputs", outputs},
          {"row_results", rows}};
}

json bench_json(const bench::BenchReport& b) {
  json results = json::array();
  for (const auto& r : b.results)
    results.push_back({{"kernel", r.kernel->name},
                       {"op", bench::op_family(r.kernel->op)},
                       {"direction", bench::direction(r.kernel->op)},
                       {"dtype", to_string(r.kernel->dtype)},
                       {"rows", r.shape.rows},
                       {"cols", r.shape.cols},
                       {"gbps", json_number(r.gbps)},
                       {"ratio_to_copy", json_number(r.ratio_to_copy)},
                       {"ratio_to_stream", json_number(r.ratio_to_stream)},
                       {"ratio_to_onednn", r.ratio_to_onednn ? json_number(*r.ratio_to_onednn) : json(nullptr)},
                       {"latency_us", json_number(r.seconds_per_call * 1e6)}});
  json declined = json::array();
  for (const auto& d : b.declined)
    declined.push_back({{"kernel", d.kernel->name}, {"rows", d.shape.rows}, {"cols", d.shape.cols}, {"reason", d.reason}});
  return {{"copy_gbps", json_number(b.copy_gbps)}, {"copy_threads", b.copy_threads},
          {"stream_fwd_gbps", json_number(b.stream_fwd.gbps)},
          {"stream_bwd_gbps", json_number(b.stream_bwd.gbps)}, {"results", results},
          {"declined", declined}};
}

}  // namespace

json series_json(const Series& s) {
  json x = json::array(), y = json::array();
  for (double v : s.x) x.push_back(json_number(v));
  for (double v : s.y) y.push_back(json_number(v));
  return {{"name", s.name}, {"x_label", s.x_label}, {"y_label", s.y_label},
          {"log_x", s.log_x}, {"log_y", s.log_y}, {"x", x}, {"y", y}};
}

json results_json(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                  const std::optional<BaselineCheck>& baseline_check) {
  json kernels = json::array();
  for (std::size_t i = 0; i < data.accuracy.size(); ++i) kernels.push_back(kernel_json(data.accuracy[i], verdicts[i]));
  json claims = json::array();
  for (const ClaimRun& c : data.claims) {
    json series = json::array();
    for (const Series& s : c.result.series) series.push_back(series_json(s));
    claims.push_back({{"id", c.claim->id},
                      {"verdict", to_string(c.result.verdict)},
                      {"figure", c.result.figure},
                      {"source", c.claim->source},
                      {"title", c.claim->title},
                      {"explanation", c.result.explanation},
                      {"seconds", c.seconds},
                      {"series", series}});
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
          {"workload", {{"lengths", lengths}, {"rows_per_family", data.accuracy_options.rows_per_family},
                        {"eps", {1e-5, 0.0}}}},
          {"timings", {{"accuracy_seconds", data.accuracy_seconds}, {"claims_seconds", data.claims_seconds},
                       {"bench_seconds", data.bench_seconds}}},
          {"kernels", kernels},
          {"claims", claims},
          {"bench", data.bench ? bench_json(*data.bench) : json(nullptr)},
          {"baseline", baseline}};
}

}  // namespace normcheck::report
