// A kernel's figures on its classes' realistic rows, the baseline file, and
// the comparison of a run with it.
#include "accuracy_baseline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "campaign.h"
#include "input_class.h"
#include "normcheck/figure_text.h"
#include "normcheck/seed.h"
#include "normcheck/input_file.h"

namespace normcheck::fuzz {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNoFigure = std::numeric_limits<double>::quiet_NaN();  // "-": the tight standard off `all`

// The larger figure, a NaN counted as +inf: a figure that could not be taken
// is no better than the worst one.
double worse_of(double a, double b) {
  if (std::isnan(b)) b = kInfinity;
  return std::max(a, b);
}

}  // namespace

std::vector<AccuracyProblem> accuracy_problems(const Kernel& kernel, uint64_t seed) {
  std::vector<AccuracyProblem> out;
  for (const InputClass& c : input_classes()) {
    std::vector<SeverityProblem> problems = severity_problems(c, kernel, seed);
    if (problems.empty() || classify(kernel, problems.front().problem, 0).id != c.id) continue;
    for (SeverityProblem& sp : problems) out.push_back({std::string(c.id), std::move(sp.problem)});
  }
  return out;
}

void AccuracyTally::add(const std::string& input_class, const CaseResult& r) {
  count_case(tally_, r);
  std::size_t first = 0;
  while (first < figures_.size() && !(figures_[first].input_class == input_class && figures_[first].output == "all"))
    ++first;
  if (first == figures_.size()) {
    AccuracyFigure all;
    all.kernel = kernel_;
    all.input_class = input_class;
    all.output = "all";
    figures_.push_back(all);
  }
  // The class's lines: `all` at `first`, its outputs after it.
  std::size_t end = first + 1;
  while (end < figures_.size() && figures_[end].input_class == input_class) ++end;
  const auto each = [&](auto&& fn) {
    for (std::size_t i = first; i < end; ++i) fn(figures_[i]);
  };
  if (r.finished && !r.evaluation.declined.empty()) {
    each([](AccuracyFigure& f) { ++f.declined; });
    return;
  }
  each([](AccuracyFigure& f) { ++f.problems; });
  AccuracyFigure& all = figures_[first];
  if (all.label.empty()) all.label = r.label;
  // A call that failed, or a NaN/inf where the exact result is finite: no
  // figure of the problem is a measurement.
  if (!r.finished || (!r.label.empty() && call_label(r.label)) || r.label == "nan") {
    each([](AccuracyFigure& f) {
      f.error_over_bound = f.ulp = f.ulp_elementwise = kInfinity;
      if (f.output == "all") f.error_over_tight = kInfinity;
    });
    return;
  }
  const Evaluation& ev = r.evaluation;
  all.error_over_bound = worse_of(all.error_over_bound, ev.max_error_over_bound);
  all.error_over_tight = worse_of(all.error_over_tight, ev.max_error_over_tight);
  all.ulp = worse_of(all.ulp, ev.max_ulp);
  all.ulp_elementwise = worse_of(all.ulp_elementwise, ev.max_ulp_elementwise);
  for (const OutputError& e : ev.outputs) {
    std::size_t i = first + 1;
    while (i < end && figures_[i].output != e.output) ++i;
    if (i == end) {  // an output first met: it counts the class's problems so far
      // (by index: the insertion below moves the vector, and `all` with it)
      AccuracyFigure f;
      f.kernel = kernel_;
      f.input_class = input_class;
      f.output = e.output;
      f.problems = figures_[first].problems;
      f.declined = figures_[first].declined;
      f.error_over_tight = kNoFigure;
      figures_.insert(figures_.begin() + static_cast<std::ptrdiff_t>(end), f);
      ++end;
    }
    AccuracyFigure& f = figures_[i];
    f.error_over_bound = worse_of(f.error_over_bound, e.max_error_over_bound);
    f.ulp = worse_of(f.ulp, e.max_ulp);
    f.ulp_elementwise = worse_of(f.ulp_elementwise, e.max_ulp_elementwise);
  }
}

JudgedTally measure_accuracy(const Kernel& kernel, uint64_t seed, const IsolationOptions& isolation,
                             std::vector<AccuracyFigure>& out) {
  AccuracyTally tally(std::string(kernel.name));
  for (const AccuracyProblem& p : accuracy_problems(kernel, seed))
    tally.add(p.input_class, run_case(kernel, p.problem, isolation));
  out.insert(out.end(), tally.figures().begin(), tally.figures().end());
  return tally.judged();
}

std::string format_accuracy_baseline(const AccuracyRun& run) {
  std::ostringstream s;
  s << "# normcheck accuracy baseline: each kernel's worst figures on the realistic rows of\n"
       "# every input class that applies to it. `normcheck accuracy --check-baseline FILE\n"
       "# [--worse-by X]` fails when a figure grows past X times its value here;\n"
       "# `--update-baseline FILE` rewrites this file (docs/plugins.md, \"Accuracy baselines\").\n"
       "# columns: kernel class output problems error_over_bound error_over_tight ulp_scale ulp_elementwise\n";
  s << "# seed " << run.seed << "\n";
  for (const AccuracyFigure& f : run.figures)
    s << f.kernel << " " << f.input_class << " " << f.output << " " << f.problems << " "
      << exact_figure_text(f.error_over_bound) << " "
      << (std::isnan(f.error_over_tight) ? std::string("-") : exact_figure_text(f.error_over_tight)) << " "
      << exact_figure_text(f.ulp) << " " << exact_figure_text(f.ulp_elementwise) << "\n";
  return s.str();
}

AccuracyRun parse_accuracy_baseline(const std::string& text, const std::string& file_name) {
  AccuracyRun run;
  bool have_seed = false;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  const auto comment = [&](const std::string& where, std::istringstream& words) {
    std::string key, value, extra;
    if (!(words >> key) || key != "seed") return;
    if (!(words >> value) || (words >> extra)) throw std::invalid_argument(where + ": expected '# seed N'");
    try {
      run.seed = parse_seed(value);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(where + ": '# seed N': N is not a seed");
    }
    have_seed = true;
  };
  const auto record = [&](const std::string& where, const std::string& first, std::istringstream& words) {
    AccuracyFigure f;
    f.kernel = first;
    std::string problems, ratio, tight, ulp, ulp_elem, extra;
    if (!(words >> f.input_class >> f.output >> problems >> ratio >> tight >> ulp >> ulp_elem) || (words >> extra))
      throw std::invalid_argument(where + ": expected 'kernel class output problems error_over_bound "
                                          "error_over_tight ulp_scale ulp_elementwise'");
    f.problems = static_cast<int64_t>(parse_figure(problems, where));
    if (static_cast<double>(f.problems) != parse_figure(problems, where))
      throw std::invalid_argument(where + ": problems '" + problems + "' is not a count");
    f.error_over_bound = parse_figure(ratio, where);
    f.error_over_tight = tight == "-" ? kNoFigure : parse_figure(tight, where);
    f.ulp = parse_figure(ulp, where);
    f.ulp_elementwise = parse_figure(ulp_elem, where);
    if (!seen.insert({f.kernel, f.input_class, f.output}).second)
      throw std::invalid_argument(where + ": a second line for " + f.kernel + " " + f.input_class + " " + f.output);
    run.figures.push_back(f);
  };
  for_each_baseline_line(text, file_name, comment, record);
  if (!have_seed) throw std::invalid_argument(file_name + ": no '# seed N' line");
  return run;
}

AccuracyRun read_accuracy_baseline(const std::string& path) {
  try {
    return parse_accuracy_baseline(read_input_file(path, kMaxSmallInput), path_text(path));
  } catch (const InputFileError& e) {
    throw std::invalid_argument(std::string("baseline file ") + e.what());
  }
}

AccuracyComparison compare_accuracy(const AccuracyRun& baseline, const AccuracyRun& now, double worse_by) {
  if (!(worse_by >= 1)) throw std::invalid_argument("the factor a figure may grow by is at least 1");
  AccuracyComparison c;
  const auto find = [](const AccuracyRun& run, const AccuracyFigure& key) -> const AccuracyFigure* {
    for (const AccuracyFigure& f : run.figures)
      if (f.kernel == key.kernel && f.input_class == key.input_class && f.output == key.output) return &f;
    return nullptr;
  };
  const auto has_kernel = [](const AccuracyRun& run, const std::string& kernel) {
    return std::any_of(run.figures.begin(), run.figures.end(),
                       [&](const AccuracyFigure& f) { return f.kernel == kernel; });
  };
  std::set<std::string> noted;
  const auto note = [&](const std::string& n) {
    if (noted.insert(n).second) c.notes.push_back(n);
  };
  for (const AccuracyFigure& b : baseline.figures) {
    if (!has_kernel(now, b.kernel)) {
      note(b.kernel + " is in the baseline but was not run");
      continue;
    }
    const AccuracyFigure* n = find(now, b);
    if (!n) {
      note(b.kernel + " " + b.input_class + " " + b.output + " is in the baseline but not measured now "
           "(the kernel's spec or its declared range changed?)");
      continue;
    }
    const auto hold = [&](const char* metric, double before, double after) {
      if (std::isnan(before)) return;
      if (std::isnan(after) || after > before * worse_by)
        c.worse.push_back({b.kernel, b.input_class, b.output, metric, before, after});
    };
    if (b.problems > 0 && n->problems == 0) {
      c.worse.push_back({b.kernel, b.input_class, b.output, "judged", static_cast<double>(b.problems), 0});
      continue;
    }
    hold("error/bound", b.error_over_bound, n->error_over_bound);
    hold("error/tight", b.error_over_tight, n->error_over_tight);
    hold("ULP (row's scale)", b.ulp, n->ulp);
    hold("ULP (elementwise)", b.ulp_elementwise, n->ulp_elementwise);
  }
  for (const AccuracyFigure& n : now.figures) {
    if (!has_kernel(baseline, n.kernel))
      note(n.kernel + " is not in the baseline (a new kernel: add it with --update-baseline)");
    else if (!find(baseline, n))
      note(n.kernel + " " + n.input_class + " " + n.output + " is not in the baseline (--update-baseline records it)");
  }
  return c;
}

namespace {

std::string short_figure(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "inf";
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", v);
  return s;
}

}  // namespace

std::string format_comparison(const AccuracyComparison& c, const std::string& file_name, double worse_by) {
  std::ostringstream s;
  for (const std::string& n : c.notes) s << "baseline: note: " << n << "\n";
  const std::string factor = worse_by == 1 ? std::string("any growth") : "more than " + short_figure(worse_by) + "x";
  if (c.worse.empty()) {
    s << "baseline: no figure got worse than " << file_name << " by " << factor << "\n";
    return s.str();
  }
  s << "baseline: " << c.worse.size() << " figure(s) got worse than " << file_name << " by " << factor << ":\n";
  // One line per kernel x class x output, its figures that got worse after
  // one another (compare_accuracy lists them together).
  for (std::size_t i = 0; i < c.worse.size(); ++i) {
    const AccuracyRegression& r = c.worse[i];
    const bool same_line = i > 0 && c.worse[i - 1].kernel == r.kernel && c.worse[i - 1].input_class == r.input_class &&
                           c.worse[i - 1].output == r.output;
    s << (same_line ? "; " : i > 0 ? "\n  " : "  ");
    if (!same_line) s << r.kernel << " " << r.input_class << " " << r.output << ": ";
    if (r.metric == std::string("judged")) {
      s << short_figure(r.before) << " problems judged before, none now (declined)";
      continue;
    }
    // inf: a NaN/inf where the exact result is finite (or the reverse), or a call that failed.
    s << r.metric << " " << short_figure(r.before) << " -> " << short_figure(r.after);
    if (std::isfinite(r.after)) s << " (" << (r.before > 0 ? short_figure(r.after / r.before) + "x" : "from 0") << ")";
  }
  s << "\n";
  return s.str();
}

std::vector<const AccuracyFigure*> failed_classes(const std::vector<AccuracyFigure>& figures) {
  std::vector<const AccuracyFigure*> failed;
  for (const AccuracyFigure& f : figures)
    if (f.output == "all" && !f.label.empty()) failed.push_back(&f);
  return failed;
}

std::string format_failed(const std::vector<const AccuracyFigure*>& failed) {
  std::string s;
  for (const AccuracyFigure* f : failed)
    s += "  " + f->kernel + " " + f->input_class + ": " +
         ratio_text(f->label, f->error_over_bound, f->error_over_tight) + "\n";
  return s;
}

std::string format_figures(const std::vector<AccuracyFigure>& figures) {
  std::ostringstream s;
  char line[200];
  std::snprintf(line, sizeof line, "  %-22s %8s %12s %12s %11s %11s\n", "class / output", "problems", "error/bound",
                "error/tight", "ULP(scale)", "ULP(elem)");
  s << line;
  for (const AccuracyFigure& f : figures) {
    const bool all = f.output == "all";
    const std::string name = all ? f.input_class : "  " + f.output;
    const std::string problems =
        !all ? "" : f.problems == 0 ? "declined" : std::to_string(f.problems);
    std::snprintf(line, sizeof line, "  %-22s %8s %12s %12s %11s %11s\n", name.c_str(), problems.c_str(),
                  short_figure(f.error_over_bound).c_str(), short_figure(f.error_over_tight).c_str(),
                  short_figure(f.ulp).c_str(), short_figure(f.ulp_elementwise).c_str());
    s << line;
  }
  return s.str();
}

}  // namespace normcheck::fuzz
