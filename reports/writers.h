// The report's documents, each from the run's data and verdicts: report.md
// (markdown.cpp), junit.xml (junit.cpp), report.html (html.cpp).
#pragma once

#include <filesystem>
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

// The report's folder `out`, made if need be, with what an interrupted run
// left (findings.partial-*) removed; returns the folder this run's findings
// are to be saved in before write_report() moves it to findings/
// (out/findings.partial-<pid>, not made). Throws std::runtime_error naming
// `out` when it cannot be made or is not a folder (a file of that name).
std::filesystem::path prepare_report_folder(const std::filesystem::path& out);
// The check of prepare_report_folder that makes nothing: throws the same
// std::runtime_error when a file of that name is in the way (a caller checks
// before its work, and makes the folder only once there is a report to write).
void check_report_folder(const std::filesystem::path& out);

// Writes the report's files to `out` (prepare_report_folder's): results.json,
// report.md, junit.xml and report.html, each replaced whole
// (write_file_atomically), the page that links the others last, then
// replaces out/findings/ with `findings` (removed when that folder does not
// exist: the run found nothing). Returns the plots, each with its error when
// gnuplot failed. Throws std::runtime_error naming the file it cannot write.
// `normcheck report` and `normcheck judge --report` (judged_report.h) write
// through it.
std::vector<Plot> write_report(const std::filesystem::path& out, const ReportData& data,
                               const std::vector<KernelVerdict>& verdicts,
                               const std::optional<BaselineCheck>& baseline_check,
                               const std::filesystem::path& findings);

// "&amp;" etc. for XML and HTML text and attributes.
std::string xml_escape(const std::string& s);

}  // namespace normcheck::report
