// The JSON of a claim's result, written the same way by `claims --json` and by
// the report's results.json (docs/cli.md, docs/report.md).
#pragma once

#include <nlohmann/json.hpp>

#include "json_number.h"
#include "normcheck/claims.h"

namespace normcheck::cli {

// One series of a claim's figure: {name, x_label, y_label, log_x, log_y, x, y}.
inline nlohmann::json series_json(const Series& s) {
  nlohmann::json x = nlohmann::json::array(), y = nlohmann::json::array();
  for (double v : s.x) x.push_back(json_number(v));
  for (double v : s.y) y.push_back(json_number(v));
  return {{"name", s.name}, {"x_label", s.x_label}, {"y_label", s.y_label},
          {"log_x", s.log_x}, {"log_y", s.log_y}, {"x", x}, {"y", y}};
}

// {id, verdict, figure, source, title, explanation, series[]}.
inline nlohmann::json claim_json(const Claim& claim, const ClaimResult& r) {
  nlohmann::json series = nlohmann::json::array();
  for (const Series& s : r.series) series.push_back(series_json(s));
  return {{"id", claim.id},         {"verdict", to_string(r.verdict)},   {"figure", r.figure},
          {"source", claim.source}, {"title", claim.title}, {"explanation", r.explanation},
          {"series", series}};
}

}  // namespace normcheck::cli
