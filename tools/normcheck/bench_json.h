// The JSON of a benchmark run, written the same way by `bench --json` and by
// the report's results.json (docs/performance.md, docs/report.md): one object
// per measured (kernel, shape), one per declined shape, and the copy baseline
// and streaming limits they are compared with.
#pragma once

#include <nlohmann/json.hpp>

#include "json_number.h"
#include "measure.h"
#include "workload.h"

namespace normcheck::cli {

inline nlohmann::json bench_result_json(const bench::BenchResult& r) {
  return {{"kernel", r.kernel->name},
          {"op", bench::op_family(r.kernel->op)},
          {"direction", bench::direction(r.kernel->op)},
          {"dtype", to_string(r.kernel->dtype)},
          {"rows", r.shape.rows},
          {"cols", r.shape.cols},
          {"gbps", json_number(r.gbps)},
          {"ratio_to_copy", json_number(r.ratio_to_copy)},
          {"ratio_to_stream", json_number(r.ratio_to_stream)},
          {"stream_limit", bench::stream_limit_name(*r.kernel)},
          {"ratio_to_onednn", r.ratio_to_onednn ? json_number(*r.ratio_to_onednn) : nlohmann::json(nullptr)},
          {"out_of_cache", r.out_of_cache},
          {"latency_us", json_number(r.seconds_per_call * 1e6)},
          {"gbps_min", json_number(r.gbps_min)},
          {"gbps_max", json_number(r.gbps_max)},
          {"samples", r.samples},
          {"calls_per_sample", r.calls_per_sample},
          {"statistic", "median"}};
}

inline nlohmann::json bench_decline_json(const bench::BenchDecline& d) {
  return {{"kernel", d.kernel->name}, {"rows", d.shape.rows}, {"cols", d.shape.cols}, {"reason", d.reason}};
}

// The measurements of a run: the copy baseline, results[] and declined[].
inline nlohmann::json bench_report_json(const bench::BenchReport& report) {
  nlohmann::json results = nlohmann::json::array(), declined = nlohmann::json::array();
  for (const auto& r : report.results) results.push_back(bench_result_json(r));
  for (const auto& d : report.declined) declined.push_back(bench_decline_json(d));
  return {{"copy_gbps", json_number(report.copy_gbps)},
          {"copy_gbps_min", json_number(report.copy_gbps_min)},
          {"copy_gbps_max", json_number(report.copy_gbps_max)},
          {"copy_threads", report.copy_threads},
          {"copy_buffer_bytes", report.copy_buffer_bytes},
          {"stream_fwd_gbps", json_number(report.stream_fwd.gbps)},
          {"stream_fwd_gbps_min", json_number(report.stream_fwd.gbps_min)},
          {"stream_fwd_gbps_max", json_number(report.stream_fwd.gbps_max)},
          {"stream_bwd_gbps", json_number(report.stream_bwd.gbps)},
          {"stream_bwd_gbps_min", json_number(report.stream_bwd.gbps_min)},
          {"stream_bwd_gbps_max", json_number(report.stream_bwd.gbps_max)},
          {"stream_add_gbps", json_number(report.stream_add.gbps)},
          {"stream_add_gbps_min", json_number(report.stream_add.gbps_min)},
          {"stream_add_gbps_max", json_number(report.stream_add.gbps_max)},
          {"stream_threads", report.stream_threads},
          {"kernel_threads", report.kernel_threads},
          {"cache_bytes", report.cache_bytes},
          {"results", results},
          {"declined", declined}};
}

}  // namespace normcheck::cli
