// The accuracy baseline's options, as `accuracy` and `judge` take them
// (fuzz/accuracy_baseline.h): --check-baseline FILE [--worse-by X] or
// --update-baseline FILE, their checks, and the figures and comparison as
// JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "accuracy_baseline.h"
#include "command.h"
#include "json_number.h"

namespace normcheck::cli {

struct BaselineOptions {
  std::string check, update;  // --check-baseline, --update-baseline (empty: not given)
  double worse_by = 1;        // --worse-by
  bool any() const { return !check.empty() || !update.empty(); }
};

// Adds the three options to `sub`; `what` says whose figures they are.
inline void add_baseline_options(CLI::App* sub, BaselineOptions& o, const std::string& what) {
  sub->add_option("--check-baseline", o.check,
                  "Hold " + what + " to this accuracy baseline file: exit 1 when one grew past --worse-by times "
                  "its value there");
  sub->add_option("--update-baseline", o.update, "Write " + what + " to this accuracy baseline file");
  sub->add_option("--worse-by", o.worse_by,
                  "The factor a figure may grow by before it counts as worse (default 1: any growth)");
}

// The checks of the options, and the baseline --check-baseline names, read;
// UsageError (exit 2) for options that contradict each other and for a file
// that is missing or malformed (named with its line).
inline std::optional<fuzz::AccuracyRun> read_baseline_options(const BaselineOptions& o) {
  if (!o.check.empty() && !o.update.empty())
    throw UsageError("--check-baseline and --update-baseline are exclusive: check, or rewrite");
  if (!(o.worse_by >= 1)) throw UsageError("--worse-by must be at least 1 (1: any growth is worse)");
  if (o.check.empty()) return std::nullopt;
  try {
    return fuzz::read_accuracy_baseline(o.check);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// A figure line as --json prints it.
inline nlohmann::json figure_json(const fuzz::AccuracyFigure& f) {
  return {{"class", f.input_class},
          {"output", f.output},
          {"problems", f.problems},
          {"declined", f.declined},
          {"error_over_bound", json_number(f.error_over_bound)},
          {"error_over_tight", json_number(f.error_over_tight)},
          {"max_ulp", json_number(f.ulp)},
          {"max_ulp_elementwise", json_number(f.ulp_elementwise)}};
}

// The comparison with the baseline file as --json prints it.
inline nlohmann::json comparison_json(const fuzz::AccuracyComparison& c, const BaselineOptions& o) {
  nlohmann::json worse = nlohmann::json::array();
  for (const fuzz::AccuracyRegression& r : c.worse)
    worse.push_back({{"kernel", r.kernel}, {"class", r.input_class}, {"output", r.output}, {"metric", r.metric},
                     {"before", json_number(r.before)}, {"after", json_number(r.after)}});
  return {{"file", o.check}, {"worse_by", o.worse_by}, {"worse", worse}, {"notes", c.notes}};
}

}  // namespace normcheck::cli
