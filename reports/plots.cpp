// Plots through gnuplot's SVG terminal. Values a log axis cannot show (0, inf)
// are pinned to the axis' ends, and each caption says where.
#include "plots.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "verdict.h"
#include "workload.h"

namespace normcheck::report {
namespace {

namespace fs = std::filesystem;

// A scratch folder of this process's own, removed when the plots are done.
class Scratch {
 public:
  Scratch() {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("normcheck_plots_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// gnuplot's single-quoted strings: a quote is written twice, nothing else is special.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "NaN";  // gnuplot skips it
  char s[40];
  std::snprintf(s, sizeof s, "%.9g", v);
  return s;
}

double pin(double v, double lo, double hi) {
  if (std::isnan(v)) return hi;
  return std::clamp(v, lo, hi);
}

// A fixed size, so the SVG states its width and height and the page lays it
// out at that size; 760 pixels wide, as the page's plot frames.
std::string terminal(int height) {
  return "set terminal svg size 760," + std::to_string(height) +
         " fixed noenhanced font 'sans,11' background rgb 'white'\n";
}

// Runs gnuplot on `script` (which reads data files in `scratch`).
void render(Plot& plot, const Scratch& scratch, const std::string& script, int height = 430) {
  const fs::path gp = scratch.dir() / (plot.id + ".gp"), svg = scratch.dir() / (plot.id + ".svg"),
                 err = scratch.dir() / (plot.id + ".err");
  {
    std::ofstream out(gp);
    out << terminal(height) << "set output " << quoted(svg.string()) << "\n" << script;
  }
  const std::string command = "gnuplot " + gp.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  if (status != 0 || !fs::exists(svg)) {
    plot.error = "gnuplot failed: " + read_file(err);
    return;
  }
  plot.svg = read_file(svg);
  const auto start = plot.svg.find("<svg");
  if (start != std::string::npos) plot.svg.erase(0, start);  // drop the XML prolog and doctype
}

struct Series2 {
  std::string title;
  std::vector<std::pair<double, double>> points;
};

// One data file per series, plotted as points (or lines) on shared axes.
std::string plot_series(const Scratch& scratch, const std::string& id, const std::vector<Series2>& series,
                        const std::string& style) {
  std::string plot_cmd;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const fs::path data = scratch.dir() / (id + "_" + std::to_string(i) + ".dat");
    std::ofstream out(data);
    for (const auto& [x, y] : series[i].points) out << number(x) << " " << number(y) << "\n";
    if (series[i].points.empty()) out << "NaN NaN\n";
    plot_cmd += (plot_cmd.empty() ? "plot " : ", \\\n     ") + quoted(data.string()) + " using 1:2 " + style +
                " title " + quoted(series[i].title);
  }
  return plot_cmd + "\n";
}

constexpr double kXLow = 1e-3, kXHigh = 1e9;     // |mean|/sigma axis ends
constexpr double kRatioLow = 1e-8, kRatioHigh = 1e4;
constexpr double kUlpLow = 0.1, kUlpHigh = 1e12;

std::vector<Op> ops_in(const ReportData& data) {
  std::vector<Op> ops;
  for (const auto& ka : data.accuracy)
    if (std::find(ops.begin(), ops.end(), ka.kernel->op) == ops.end()) ops.push_back(ka.kernel->op);
  return ops;
}

void accuracy_plots(const ReportData& data, const Scratch& scratch, std::vector<Plot>& plots) {
  for (Op op : ops_in(data)) {
    const std::string name(to_string(op));
    std::vector<Series2> ratio_series, ulp_series;
    for (const auto& ka : data.accuracy) {
      if (ka.kernel->op != op) continue;
      Series2 r{std::string(ka.kernel->name), {}}, u{std::string(ka.kernel->name), {}};
      for (const RowResult& row : ka.rows) {
        if (!row.evaluation.declined.empty()) continue;
        const double x = pin(row.mean_over_sigma, kXLow, kXHigh);
        r.points.push_back({x, pin(row.evaluation.max_error_over_bound, kRatioLow, kRatioHigh)});
        u.points.push_back({x, pin(row.evaluation.max_ulp, kUlpLow, kUlpHigh)});
      }
      ratio_series.push_back(std::move(r));
      ulp_series.push_back(std::move(u));
    }
    const std::string axes =
        "set logscale xy\nset format x '1e%T'\nset format y '1e%T'\nset grid\nset key outside right top\n"
        "set xlabel '|mean| / sigma of the row (exact)'\n"
        "set xrange [" + number(kXLow / 2) + ":" + number(kXHigh * 2) + "]\n";
    Plot ratio{"error_" + name, "accuracy", name + ": error / bound against |mean|/sigma",
               "One point per row and kernel: the row's largest error divided by the kernel's a-priori bound "
               "(above the dashed line at 1 the kernel broke its bound). A row with |mean|/sigma = 0 is drawn "
               "at " + number(kXLow) + " and a constant row (sigma = 0) at " + number(kXHigh) +
               "; an error of 0 at " + number(kRatioLow) + ", an infinite one (NaN/inf mismatch) at " +
               number(kRatioHigh) + ".",
               {}, {}};
    render(ratio, scratch,
           axes + "set ylabel 'max error / bound'\nset yrange [" + number(kRatioLow / 2) + ":" +
               number(kRatioHigh * 2) + "]\n" +
               "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb 'red'\n" +
               "set label 'bound' at graph 0.02, first 1.6 tc rgb 'red'\n" +
               plot_series(scratch, ratio.id, ratio_series, "with points pointsize 0.8"));
    plots.push_back(std::move(ratio));
    Plot ulp{"ulp_" + name, "accuracy", name + ": ULP error against |mean|/sigma",
             "The same rows in ULP of the exact result, counted in ULPs of the row's scale where the exact "
             "value is tiny against it (docs/semantics.md, Metrics): read error/bound above for the verdict. "
             "0 ULP is drawn at " + number(kUlpLow) + ", a count above " + number(kUlpHigh) + " at " +
             number(kUlpHigh) + ".",
             {}, {}};
    render(ulp, scratch,
           axes + "set ylabel 'max ULP error'\nset yrange [" + number(kUlpLow / 2) + ":" + number(kUlpHigh * 2) +
               "]\n" + plot_series(scratch, ulp.id, ulp_series, "with points pointsize 0.8"));
    plots.push_back(std::move(ulp));
  }
}

// Histogram of log10(error/bound) per kernel: 0.5-wide bins from -8 to 4;
// an error of 0 counts in the lowest bin.
void distribution_plots(const ReportData& data, const Scratch& scratch, std::vector<Plot>& plots) {
  constexpr double kLow = -8, kHigh = 4, kWidth = 0.5;
  constexpr int kBins = static_cast<int>((kHigh - kLow) / kWidth);
  for (Op op : ops_in(data)) {
    const std::string name(to_string(op));
    std::vector<Series2> series;
    for (const auto& ka : data.accuracy) {
      if (ka.kernel->op != op) continue;
      std::array<int, kBins> counts{};
      for (const RowResult& row : ka.rows) {
        if (!row.evaluation.declined.empty()) continue;
        const double v = row.evaluation.max_error_over_bound;
        // Clamped in double: converting an infinite bin index to int is undefined.
        const double l = v > 0 ? std::log10(v) : kLow;
        const int bin = static_cast<int>(std::clamp(std::floor((l - kLow) / kWidth), 0.0, kBins - 1.0));
        ++counts[bin];
      }
      Series2 s{std::string(ka.kernel->name), {}};
      for (int b = 0; b < kBins; ++b) s.points.push_back({kLow + (b + 0.5) * kWidth, counts[b]});
      series.push_back(std::move(s));
    }
    Plot p{"dist_" + name, "distribution", name + ": distribution of error / bound",
           "Rows per 0.5-wide bin of log10(max error / bound), per kernel. Right of the dashed line at 0 the "
           "kernel broke its bound; errors of 0 count in the leftmost bin, infinite ones in the rightmost.",
           {}, {}};
    render(p, scratch,
           "set grid\nset key outside right top\nset xlabel 'log10(max error / bound)'\nset ylabel 'rows'\n"
           "set xrange [" + number(kLow) + ":" + number(kHigh) + "]\nset yrange [0:*]\n"
           "set arrow from first 0, graph 0 to first 0, graph 1 nohead dt 2 lw 2 lc rgb 'red'\n" +
               plot_series(scratch, p.id, series, "with linespoints pointsize 0.6"));
    plots.push_back(std::move(p));
  }
}

void speed_plots(const ReportData& data, const Scratch& scratch, std::vector<Plot>& plots) {
  if (!data.bench || data.bench->results.empty()) return;
  std::vector<bench::BenchShape> shapes;
  for (const auto& r : data.bench->results)
    if (std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end()) shapes.push_back(r.shape);
  std::string xtics = "set xtics (";
  for (std::size_t i = 0; i < shapes.size(); ++i)
    xtics += (i ? ", " : "") + quoted(std::to_string(shapes[i].rows) + "x" + std::to_string(shapes[i].cols)) + " " +
             std::to_string(i);
  xtics += ")\n";
  for (const char* dir : {"fwd", "bwd"}) {
    std::vector<Series2> series;
    for (const auto& ka : data.accuracy) {
      if (bench::direction(ka.kernel->op) != dir) continue;
      Series2 s{std::string(ka.kernel->name), {}};
      for (const auto& r : data.bench->results) {
        if (r.kernel != ka.kernel) continue;
        const auto at = std::find(shapes.begin(), shapes.end(), r.shape) - shapes.begin();
        s.points.push_back({static_cast<double>(at), r.ratio_to_stream});
      }
      if (!s.points.empty()) series.push_back(std::move(s));
    }
    if (series.empty()) continue;
    const std::string id = std::string("speed_") + dir;
    const bool forward = dir == std::string("fwd");
    const double limit = forward ? data.bench->stream_fwd.gbps : data.bench->stream_bwd.gbps;
    Plot p{id, "speed", std::string(forward ? "Forward" : "Backward") +
                            " kernels: throughput against the streaming limit",
           "Throughput per shape (rows x d) as a ratio to the streaming limit measured in the same run: every "
           "core reads its share of the " + std::string(forward ? "input" : "two inputs") +
               " and writes its share of the output with non-temporal stores (1 = the limit, dashed; on "
               "shapes out of cache, all that the memory allows). Limit: " + figure(limit) + " GB/s; a copy: " +
               figure(data.bench->copy_gbps) + " GB/s." +
               (forward ? " A row that adds a residual in front of the norm (*.hwy_add*) is divided by the limit "
                          "that reads two inputs and writes two outputs: " + figure(data.bench->stream_add.gbps) +
                              " GB/s."
                        : std::string()) +
               " Ratios, not absolute speeds, are what survive a shared, noisy machine.",
           {}, {}};
    render(p, scratch,
           "set logscale y\nset format y '%g'\nset grid\nset key outside right top\nset xlabel 'shape (rows x d)'\n"
           "set ylabel 'throughput / streaming limit'\nset xrange [-0.5:" + number(shapes.size() - 0.5) + "]\n" +
               xtics + "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb 'red'\n" +
               plot_series(scratch, id, series, "with linespoints pointsize 0.7"));
    plots.push_back(std::move(p));
  }
}

void claim_plots(const ReportData& data, const Scratch& scratch, std::vector<Plot>& plots) {
  for (const ClaimRun& c : data.claims) {
    const auto& all = c.result.series;
    if (all.empty()) continue;
    std::vector<Series2> series;
    bool any = false;
    for (const Series& s : all) {
      Series2 s2{s.name, {}};
      for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
        if ((s.log_x && !(s.x[i] > 0)) || (s.log_y && !(s.y[i] > 0))) continue;  // not on a log axis
        s2.points.push_back({s.x[i], s.y[i]});
        any = true;
      }
      series.push_back(std::move(s2));
    }
    if (!any) continue;
    const Series& first = all.front();
    const std::string id = "claim_" + std::string(c.claim->id);
    Plot p{id, "claims", std::string(c.claim->id) + ": " + std::string(c.claim->title),
           std::string(c.claim->id) + " " + std::string(to_string(c.result.verdict)) + ": " + c.result.figure, {}, {}};
    render(p, scratch,
           std::string(first.log_x ? "set logscale x\nset format x '%g'\n" : "") +
               (first.log_y ? "set logscale y\nset format y '%g'\n" : "") +
               "set grid\nset key below left Left reverse\nset xlabel " + quoted(first.x_label) + "\nset ylabel " +
               quoted(first.y_label) + "\n" + plot_series(scratch, id, series, "with linespoints pointsize 0.6"),
           430 + 17 * static_cast<int>(series.size()));  // room for the key below
    plots.push_back(std::move(p));
  }
}

}  // namespace

bool gnuplot_available(std::string* version) {
  static const std::string found = [] {
    FILE* pipe = ::popen("gnuplot --version 2>/dev/null", "r");
    if (!pipe) return std::string();
    char line[200] = {0};
    const bool ok = std::fgets(line, sizeof line, pipe) != nullptr;
    ::pclose(pipe);
    std::string s = ok ? line : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }();
  if (version) *version = found;
  return !found.empty();
}

std::vector<Plot> make_plots(const ReportData& data) {
  std::vector<Plot> plots;
  if (!gnuplot_available()) return plots;
  const Scratch scratch;
  accuracy_plots(data, scratch, plots);
  distribution_plots(data, scratch, plots);
  speed_plots(data, scratch, plots);
  claim_plots(data, scratch, plots);
  return plots;
}

}  // namespace normcheck::report
