// The accuracy baseline file: build, format, parse, compare.
#include "baseline.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "normcheck/figure_text.h"
#include "normcheck/input_file.h"
#include "normcheck/seed.h"
#include "verdict.h"

namespace normcheck::report {
namespace {

const BaselineEntry* find(const Baseline& b, const std::string& kernel, const std::string& output) {
  for (const BaselineEntry& e : b.entries)
    if (e.kernel == kernel && e.output == output) return &e;
  return nullptr;
}

bool has_kernel(const Baseline& b, const std::string& kernel) {
  for (const BaselineEntry& e : b.entries)
    if (e.kernel == kernel) return true;
  return false;
}

}  // namespace

Baseline baseline_of(const ReportData& data) {
  Baseline b{data.quick, data.seed, data.simd_target, {}};
  for (const KernelAccuracy& ka : data.accuracy)
    for (const OutputWorst& w : output_worsts(ka))
      b.entries.push_back({std::string(ka.kernel->name), std::string(to_string(ka.kernel->op)), w.output,
                           w.max_error_over_bound, w.max_ulp});
  return b;
}

std::string format_baseline(const Baseline& b) {
  std::ostringstream s;
  s << "# normcheck accuracy baseline: the worst error of each kernel x op x output on the\n"
       "# report's " << (b.quick ? "quick" : "default") << " workload. `normcheck report"
    << (b.quick ? " --quick" : "") << " --check-baseline FILE` fails when a\n"
       "# kernel does worse; `--update-baseline FILE` rewrites this file (docs/report.md).\n"
       "# columns: kernel op output max_error_over_bound max_ulp\n";
  s << "# workload " << (b.quick ? "quick" : "default") << " seed " << b.seed << " simd_target "
    << (b.simd_target.empty() ? "?" : b.simd_target) << "\n";
  for (const BaselineEntry& e : b.entries)
    s << e.kernel << " " << e.op << " " << e.output << " " << exact_figure_text(e.max_error_over_bound) << " "
      << exact_figure_text(e.max_ulp) << "\n";
  return s.str();
}

Baseline parse_baseline(const std::string& text, const std::string& file_name) {
  Baseline b;
  bool have_workload = false;
  const auto comment = [&](const std::string& where, std::istringstream& words) {
    std::string key;
    if (!(words >> key) || key != "workload") return;
    std::string mode, seed_word, seed, target_word;
    const auto bad = [&] {
      return std::invalid_argument(where + ": expected '# workload quick|default seed N simd_target T'");
    };
    if (!(words >> mode >> seed_word >> seed >> target_word >> b.simd_target) || seed_word != "seed" ||
        target_word != "simd_target" || (mode != "quick" && mode != "default"))
      throw bad();
    try {
      b.seed = parse_seed(seed);
    } catch (const std::invalid_argument&) {
      throw bad();
    }
    b.quick = mode == "quick";
    have_workload = true;
  };
  const auto record = [&](const std::string& where, const std::string& first, std::istringstream& words) {
    BaselineEntry e;
    e.kernel = first;
    std::string ratio, ulp, extra;
    if (!(words >> e.op >> e.output >> ratio >> ulp) || (words >> extra))
      throw std::invalid_argument(where + ": expected 'kernel op output max_error_over_bound max_ulp'");
    e.max_error_over_bound = parse_figure(ratio, where);
    e.max_ulp = parse_figure(ulp, where);
    b.entries.push_back(e);
  };
  for_each_baseline_line(text, file_name, comment, record);
  if (!have_workload) throw std::invalid_argument(file_name + ": no '# workload ...' line");
  return b;
}

Baseline read_baseline(const std::filesystem::path& path) {
  try {
    return parse_baseline(read_input_file(path, kMaxSmallInput), path_text(path));
  } catch (const InputFileError& e) {
    throw std::invalid_argument(std::string("baseline file ") + e.what());
  }
}

BaselineCheck check_baseline(const ReportData& data, const Baseline& baseline) {
  BaselineCheck check;
  if (!baseline.simd_target.empty() && baseline.simd_target != data.simd_target)
    check.notes.push_back("the baseline was made on SIMD target " + baseline.simd_target + ", this run is on " +
                          data.simd_target + ": the SIMD kernels' figures may differ for that reason alone");
  for (const KernelAccuracy& ka : data.accuracy) {
    const std::string kernel(ka.kernel->name);
    if (!has_kernel(baseline, kernel)) {
      check.notes.push_back(kernel + " is not in the baseline (a new kernel: add it with --update-baseline)");
      continue;
    }
    for (const OutputWorst& w : output_worsts(ka)) {
      const BaselineEntry* e = find(baseline, kernel, w.output);
      // An output the baseline never saw an error in counts from 0.
      const double ratio_before = e ? e->max_error_over_bound : 0, ulp_before = e ? e->max_ulp : 0;
      const std::string op(to_string(ka.kernel->op));
      if (w.max_error_over_bound > ratio_before)
        check.regressions.push_back({kernel, op, w.output, "error/bound", ratio_before, w.max_error_over_bound,
                                     w.ratio_row ? describe(*w.ratio_row) : ""});
      if (w.max_ulp > ulp_before)
        check.regressions.push_back(
            {kernel, op, w.output, "ULP", ulp_before, w.max_ulp, w.ulp_row ? describe(*w.ulp_row) : ""});
    }
  }
  for (const BaselineEntry& e : baseline.entries) {
    bool present = false;
    for (const KernelAccuracy& ka : data.accuracy) present = present || ka.kernel->name == e.kernel;
    if (!present) {
      const std::string note = e.kernel + " is in the baseline but not in this run's table";
      if (check.notes.empty() || check.notes.back() != note) check.notes.push_back(note);
    }
  }
  return check;
}

std::string format_check(const BaselineCheck& check, const std::string& file_name) {
  std::ostringstream s;
  for (const std::string& n : check.notes) s << "baseline: note: " << n << "\n";
  if (check.regressions.empty()) {
    s << "baseline: no kernel got worse than " << file_name << "\n";
    return s.str();
  }
  s << "baseline: " << check.regressions.size() << " figure(s) got worse than " << file_name << ":\n";
  for (const Regression& r : check.regressions) {
    const std::string factor = r.before > 0 ? figure(r.after / r.before) + "x" : "from 0";
    s << "  " << r.kernel << " " << r.op << " " << r.output << ": " << r.metric << " " << figure(r.before) << " -> "
      << figure(r.after) << " (" << factor << " worse) on " << r.input << "\n";
  }
  return s.str();
}

}  // namespace normcheck::report
