// results.json: everything one run found, in the versioned schema of
// reports/results.schema.json (docs/report.md describes every field).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "baseline.h"
#include "report_data.h"
#include "verdict.h"

namespace normcheck::report {

inline constexpr int kResultsSchemaVersion = 3;

nlohmann::json results_json(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                            const std::optional<BaselineCheck>& baseline_check);

}  // namespace normcheck::report
