// The report's folder and its files, as every report is written
// (writers.h: prepare_report_folder, write_report).
#include <unistd.h>

#include <stdexcept>

#include "normcheck/io.h"
#include "results_json.h"
#include "writers.h"

namespace normcheck::report {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannot_create(const fs::path& out, const std::error_code& ec) {
  throw std::runtime_error("cannot create the report folder " + out.string() + ": " +
                           (ec ? ec.message() : "a file of that name is in the way"));
}

}  // namespace

void check_report_folder(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) cannot_create(out, {});
}

fs::path prepare_report_folder(const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (!fs::is_directory(out)) cannot_create(out, ec);
  for (const auto& entry : fs::directory_iterator(out, ec))  // left by an interrupted run
    if (entry.path().filename().string().rfind("findings.partial-", 0) == 0) fs::remove_all(entry.path(), ec);
  return out / ("findings.partial-" + std::to_string(::getpid()));
}

std::vector<Plot> write_report(const fs::path& out, const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                               const std::optional<BaselineCheck>& baseline_check, const fs::path& findings) {
  std::vector<Plot> plots = make_plots(data);
  // Each file is replaced whole; the page that links the others is written
  // last, and nothing before the caller's run is done, so an interrupted run
  // leaves the previous report as it was.
  write_file_atomically(out / "results.json", results_json(data, verdicts, baseline_check).dump(1) + "\n");
  write_file_atomically(out / "report.md", markdown_report(data, verdicts, baseline_check));
  write_file_atomically(out / "junit.xml", junit_report(data, verdicts, baseline_check));
  write_file_atomically(out / "report.html", html_report(data, verdicts, plots, baseline_check));
  std::error_code ec;
  fs::remove_all(out / "findings", ec);
  if (!findings.empty() && fs::exists(findings)) fs::rename(findings, out / "findings");
  return plots;
}

}  // namespace normcheck::report
