// The report's plots, drawn by gnuplot's SVG terminal (docs/report.md says why
// gnuplot): each plot is a gnuplot script plus data files in a scratch folder,
// and comes back as one SVG document for the HTML to inline.
#pragma once

#include <string>
#include <vector>

#include "report_data.h"

namespace normcheck::report {

struct Plot {
  std::string id;       // unique in the report: "error_layernorm_fwd", ...
  std::string section;  // "accuracy", "distribution", "speed", "claims"
  std::string title;
  std::string caption;  // what is plotted and how to read it
  std::string svg;      // empty when gnuplot failed (error says why)
  std::string error;
};

// Whether gnuplot is on PATH (and its version line), checked once.
bool gnuplot_available(std::string* version = nullptr);

// Every plot of the report; the scratch folder is removed afterwards.
std::vector<Plot> make_plots(const ReportData& data);

}  // namespace normcheck::report
