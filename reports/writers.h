// The report's documents, each from the run's data and verdicts: report.md
// (markdown.cpp), junit.xml (junit.cpp), report.html (html.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline.h"
#include "plots.h"
#include "report_data.h"
#include "verdict.h"

namespace normcheck::report {

std::string markdown_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                            const std::optional<BaselineCheck>& baseline_check);

// One testcase per kernel x check (grade, within_bound, nonfinite, memory,
// fuzz when fuzzed, baseline when checked), one per claim.
std::string junit_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                         const std::optional<BaselineCheck>& baseline_check);

// One self-contained page: no script, no link out; the plots are SVG inlined
// as data: URIs.
std::string html_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                        const std::vector<Plot>& plots, const std::optional<BaselineCheck>& baseline_check);

// "&amp;" etc. for XML and HTML text and attributes.
std::string xml_escape(const std::string& s);

}  // namespace normcheck::report
