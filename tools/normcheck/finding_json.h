// The JSON of a fuzz finding's figures, written the same way by `fuzz --json`
// and by the report's results.json (docs/cli.md, docs/report.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "campaign.h"
#include "json_number.h"

namespace normcheck::cli {

// An error/bound ratio with its label: the number for a pass or an accuracy
// finding, else the label ("nan", "crash", "declined", ...).
inline nlohmann::json ratio_json(const std::string& label, double error_over_bound) {
  if (!label.empty() && label != "accuracy") return label;
  return json_number(error_over_bound);
}

// {rows, problems, declined, worst, worst_row, each: [{row, result}]}.
inline nlohmann::json severity_json(const fuzz::Severity& s) {
  nlohmann::json each = nlohmann::json::array();
  for (const auto& row : s.each) each.push_back({{"row", row.what}, {"result", ratio_json(row.label, row.error_over_bound)}});
  return {{"rows", s.rows},
          {"problems", s.problems},
          {"declined", s.declined},
          {"worst", ratio_json(s.label, s.worst_error_over_bound)},
          {"worst_error_over_tight", json_number(s.worst_error_over_tight)},
          {"worst_row", s.worst_row.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.worst_row)},
          {"each", each}};
}

// The fields of a finding both documents carry: {class, error_over_bound,
// error_over_tight (Evaluation::max_error_over_tight), severity}.
inline void add_finding_figures(nlohmann::json& entry, const fuzz::Finding& f) {
  entry["class"] = f.input_class.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.input_class);
  entry["error_over_bound"] = ratio_json(f.label, f.error_over_bound);
  entry["error_over_tight"] = json_number(f.error_over_tight);
  entry["severity"] = f.severity ? severity_json(*f.severity) : nlohmann::json(nullptr);
}

}  // namespace normcheck::cli
