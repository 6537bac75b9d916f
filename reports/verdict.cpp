// Verdicts from the rows: counts, failing families, declines grouped by reason,
// and the hints that say why (each from the rows' own facts, never from a
// kernel's name).
#include "verdict.h"

#include "normcheck/bounds.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_policy.h"
#include "normcheck/reimplementation.h"
#include "row_families.h"
#include "shell_quote.h"  // tools/normcheck: one quoting for every printed command

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

namespace normcheck::report {
namespace {

void add(std::vector<Count>& counts, const std::string& what) {
  auto it = std::find_if(counts.begin(), counts.end(), [&](const Count& c) { return c.what == what; });
  if (it == counts.end()) counts.push_back({what, 1});
  else ++it->rows;
}

// Decline reasons name the row's figures; grouped without them: "eps = 0
// is outside the kernel's declared domain eps>=1e-06" is "eps outside the
// kernel's declared domain eps>=1e-06", and |x|'s limit at the row's d
// ("(|x| <= 1.1e+18 here)") is left to the domain's text.
std::string decline_group(std::string reason) {
  if (reason.rfind("row ", 0) == 0) {
    if (const auto colon = reason.find("): "); colon != std::string::npos) reason = reason.substr(colon + 3);
  }
  static const std::regex value_outside(R"((\S+) = \S+ is outside)");
  static const std::regex x_limit_here(R"( \(\|x\| <= \S+ here\))");
  static const std::regex number(R"(= [-+0-9.e]+(inf)?)");
  reason = std::regex_replace(reason, value_outside, "$1 outside");
  reason = std::regex_replace(reason, x_limit_here, "");
  return std::regex_replace(reason, number, "= ...");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string join_counts(const std::vector<Count>& counts) {
  std::string s;
  for (const Count& c : counts)
    s += (s.empty() ? "" : ", ") + c.what + " (" + std::to_string(c.rows) + (c.rows == 1 ? " row)" : " rows)");
  return s;
}

std::string lengths_text(const AccuracyOptions& o) {
  std::string s;
  for (int64_t d : o.lengths) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "d = " + s;
}

// float's rstd^3 leaves the normal range below this rstd: 2^-42 (cube 2^-126).
constexpr double kRstdCubeUnderflows = 0x1p-42;
const double kRstdCubeOverflows = std::cbrt(static_cast<double>(FLT_MAX));

// rstd^3 leaves float's range below 2^-42 (underflow) and above 2^42.67 (overflow).
bool rstd_cube_outside_float(const RowResult& r) {
  return r.rstd > 0 && (r.rstd < kRstdCubeUnderflows || r.rstd > kRstdCubeOverflows);
}

// The table's own statement of the algorithm says whether it forms rstd^3.
bool forms_rstd_cube(const Kernel& k) { return k.algorithm.find("rstd^3") != std::string_view::npos; }

void failure_hints(const KernelAccuracy& ka, KernelVerdict& v) {
  std::vector<const RowResult*> failed;
  for (const RowResult& r : ka.rows)
    if (r.evaluation.declined.empty() && !r.evaluation.pass) failed.push_back(&r);
  if (failed.empty()) return;
  const bool backward = ka.kernel->op == Op::layernorm_bwd || ka.kernel->op == Op::rmsnorm_bwd;
  const auto explained = std::count_if(failed.begin(), failed.end(),
                                       [](const RowResult* r) { return rstd_cube_outside_float(*r); });
  if (backward && 2 * explained >= static_cast<std::ptrdiff_t>(failed.size())) {
    char where[300];
    std::snprintf(where, sizeof where,
                  "%lld of the %zu failing rows have rstd^3 outside float's range (rstd < 2^-42, i.e. sigma > "
                  "4.4e12, where it underflows to 0, or rstd > 2^42.7, where it overflows)",
                  static_cast<long long>(explained), failed.size());
    v.notes.push_back(forms_rstd_cube(*ka.kernel) ? "Why: " + std::string(where) +
                                       "; its algorithm forms rstd^3 in float (\"" + std::string(ka.kernel->algorithm) +
                                       "\"), so dx loses or spoils its projection term there."
                                 : "Where: " + std::string(where) + ".");
  }
  // A batch that fails worst on dgamma or dbeta, sums over its rows that the
  // one-row problems leave as one term each: how the kernel sums over the
  // rows is the cause, which its algorithm line states.
  const RowResult* batch = nullptr;
  for (const RowResult* r : failed) {
    const std::string& out = r->evaluation.worst.output;
    if (backward && r->rows > 1 && (out == "dgamma" || out == "dbeta") &&
        (!batch || r->evaluation.max_error_over_bound > batch->evaluation.max_error_over_bound))
      batch = r;
  }
  if (batch)
    v.notes.push_back("Why on batches: on " + std::to_string(batch->rows) + " rows of d = " + std::to_string(batch->d) +
                      " (" + batch->family + ") " + batch->evaluation.worst.output + " is off by " +
                      figure(batch->evaluation.max_error_over_bound) + "x its bound (" +
                      worst_text(batch->evaluation.worst) + "), a sum over the rows; its algorithm: \"" +
                      std::string(ka.kernel->algorithm) + "\".");
  double lo_ratio = INFINITY, hi_ratio = 0, lo_x = INFINITY, hi_x = 0;
  for (const RowResult* r : failed) {
    lo_ratio = std::min(lo_ratio, r->mean_over_sigma);
    hi_ratio = std::max(hi_ratio, r->mean_over_sigma);
    lo_x = std::min(lo_x, r->max_abs_x);
    hi_x = std::max(hi_x, r->max_abs_x);
  }
  v.notes.push_back("Failing rows have |mean|/sigma " + figure(lo_ratio) + " .. " + figure(hi_ratio) +
                    " and max|x| " + figure(lo_x) + " .. " + figure(hi_x) +
                    (v.rows_nonfinite_mismatch ? "; " + std::to_string(v.rows_nonfinite_mismatch) +
                                                     " with NaN/inf where the exact result is finite (or the reverse)"
                                               : "") +
                    (v.rows_memory ? "; " + std::to_string(v.rows_memory) + " wrote outside its outputs or into an input"
                                   : "") +
                    ". Worst: " + describe(*v.worst_row) + ", " + v.worst_output +
                    (std::isinf(v.worst_ratio) ? " NaN/inf where the exact value is finite (or the reverse)."
                                               : " off by " + figure(v.worst_ratio) + "x its bound."));
}

// The ULP figure is taken against the row's scale (docs/semantics.md,
// "Metrics"): below it, it counts ULPs of the scale, not of the element, so a
// large figure is a large error against what the row holds, never an output
// near zero. The note says where, how many bits that is, and whether the
// kernel's bound admits it there.
void ulp_note(const KernelAccuracy& ka, KernelVerdict& v) {
  if (v.max_ulp < 0x1p20) return;
  for (const OutputWorst& w : output_worsts(ka)) {
    if (w.max_ulp != v.max_ulp || !w.ulp_row) continue;
    const RowResult& row = *w.ulp_row;
    char bits[32];
    std::snprintf(bits, sizeof bits, "%.0f", std::log2(v.max_ulp));
    v.notes.push_back("Max ULP " + figure(v.max_ulp) + " (" + w.output + ", " + describe(row) +
                      "): an error of that many ULPs of the row's scale (the magnitude of the terms the output "
                      "is computed from), about " + bits + " bits, " +
                      (row.evaluation.pass ? "within the kernel's bound on that row" : "on a row where it breaks its bound") +
                      (forms_rstd_cube(*ka.kernel) && rstd_cube_outside_float(row)
                           ? "; its algorithm forms rstd^3, which is outside float's range there"
                           : "") +
                      ". Act on error/bound (worst " + figure(v.worst_ratio) + ").");
    return;
  }
}

// "bytes moved per call >= 2x the 32 MiB last-level cache": bench::out_of_cache in words.
std::string out_of_cache_criterion(std::size_t cache_bytes) {
  return "bytes moved per call >= " + figure(bench::kOutOfCacheFactor) + "x the " +
         (cache_bytes ? figure(static_cast<double>(cache_bytes) / (1 << 20)) + " MiB " : std::string()) +
         "last-level cache";
}

// The medians over the shapes out of cache (bench::out_of_cache), where the
// streaming limit is the ceiling; a shape in cache can pass it (ratio above
// 1), so mixing both would say neither. With no shape out of cache, the
// medians over every shape, said to be in-cache figures.
void speed(const ReportData& data, KernelVerdict& v) {
  if (!data.bench) {
    v.speed = data.judged.empty() ? "not measured (--no-bench)" : "not measured: judged from its outputs";
    return;
  }
  std::vector<const bench::BenchResult*> mine, out_of_cache;
  for (const auto& r : data.bench->results) {
    if (r.kernel != v.kernel) continue;
    mine.push_back(&r);
    if (r.out_of_cache) out_of_cache.push_back(&r);
  }
  if (mine.empty()) {
    std::string reason;
    for (const auto& d : data.bench->declined)
      if (d.kernel == v.kernel) reason = d.reason;
    v.speed = "not measured" + (reason.empty() ? std::string() : " (declined: " + reason + ")");
    return;
  }
  v.speed_in_cache = out_of_cache.empty();
  const auto& shapes = v.speed_in_cache ? mine : out_of_cache;
  std::vector<double> stream, copy, onednn;
  for (const bench::BenchResult* r : shapes) {
    stream.push_back(r->ratio_to_stream);
    copy.push_back(r->ratio_to_copy);
    if (r->ratio_to_onednn) onednn.push_back(*r->ratio_to_onednn);
  }
  v.bench_shapes = static_cast<int>(shapes.size());
  v.stream_ratio = median(stream);
  v.copy_ratio = median(copy);
  char line[200];
  std::snprintf(line, sizeof line, "%.2fx the streaming limit (%.2fx a copy)", *v.stream_ratio,
                *v.copy_ratio);
  v.speed = line;
  if (!onednn.empty()) {
    v.onednn_ratio = median(onednn);
    std::snprintf(line, sizeof line, ", %.2fx oneDNN's throughput", *v.onednn_ratio);
    v.speed += line;
  }
  const std::string n = std::to_string(shapes.size()) + (shapes.size() == 1 ? " shape" : " shapes");
  const std::size_t cache = data.bench->cache_bytes;
  const std::string criterion = out_of_cache_criterion(cache);
  if (!v.speed_in_cache)
    v.speed += ", median of " + n + " out of cache (" + criterion + ")";
  else if (cache == 0)
    v.speed += ", median of " + n + ", in cache or not: the last-level cache's size is not known";
  else
    v.speed += ", median of " + n + " in cache: no shape is out of cache (" + criterion +
               "), so these are not the fraction of the memory's limit";
}

// The fuzz campaign's findings on the kernel: its notes, and the worst
// error/bound their severities measured on realistic rows. A finding weighs
// as a failing row does in grade_of(): the kernel broke its promise on a
// generated problem (shrunk, saved, replayable); a control the rows missed
// but the campaign caught is caught.
void fuzz_findings(const ReportData& data, KernelVerdict& v) {
  if (!data.fuzz) return;
  for (const fuzz::Finding& f : data.fuzz->result.findings)
    if (f.kernel == v.kernel->name) v.fuzz_findings.push_back(&f);
  for (const fuzz::Finding* f : v.fuzz_findings)
    if (f->severity && f->severity->problems > 0)
      v.realistic_worst = std::max(v.realistic_worst.value_or(0), f->severity->worst_error_over_bound);
}

void fuzz_notes(const ReportData& data, KernelVerdict& v) {
  if (!data.fuzz) return;
  if (v.fuzz_findings.empty()) {
    if (v.rows_run > 0)
      v.notes.push_back("Fuzzing: no finding in " + std::to_string(data.fuzz->cases_per_kernel) +
                        " generated problems.");
    return;
  }
  for (const fuzz::Finding* f : v.fuzz_findings) {
    std::string note = "Fuzzing found " + f->label;
    if (!f->input_class.empty())
      note += " (" + finding_class_text(*f) + ") on a " + finding_shape(*f) + " problem, " +
              fuzz::ratio_text(f->label, f->error_over_bound, f->error_over_tight);
    note += ": " + f->detail + ".";
    if (f->severity) note += " Severity " + fuzz::severity_text(*f->severity) + ".";
    if (!f->file.empty()) note += " Replay: " + replay_command(*f);
    v.notes.push_back(note);
  }
}

// A judged kernel's findings (judged_report.h): each problem that broke the
// bound, its worst element, the policies its outputs are consistent with,
// and its problem file with the command that replays it.
void judged_findings(const KernelAccuracy& ka, KernelVerdict& v) {
  for (const RowResult& r : ka.rows) {
    if (r.problem_file.empty()) continue;
    std::string note = "Finding on " + r.family + ": " + r.finding_label + ", " + worst_text(r.evaluation.worst) + ".";
    for (const std::string& p : r.evaluation.consistent_policies) note += " Consistent with the policy " + p + ".";
    note += " Problem file: " + r.problem_file + (r.replay.empty() ? "." : "; replay: " + r.replay);
    v.notes.push_back(note);
  }
}

// Each label of the findings once, in the order found (a label may be found
// in several classes), keeping those `keep` selects.
std::string finding_labels(const KernelVerdict& v, bool (*keep)(const std::string&)) {
  std::string labels;
  std::set<std::string> named;
  for (const fuzz::Finding* f : v.fuzz_findings)
    if (keep(f->label) && named.insert(f->label).second) labels += (labels.empty() ? "" : ", ") + f->label;
  return labels;
}

bool any_label(const std::string&) { return true; }

// The largest error/bound seen, rows and findings together (+inf for a NaN/inf).
double worst_seen(const KernelVerdict& v) {
  double worst = v.worst_ratio;
  for (const fuzz::Finding* f : v.fuzz_findings) worst = std::max(worst, f->error_over_bound);
  return worst;
}

// "1 row", "3 rows".
std::string rows_text(int64_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// `what` with `piece` after it, "; " between.
void append(std::string& what, const std::string& piece) { what += (what.empty() ? "" : "; ") + piece; }

// The headline and advice of each grade, from the verdict's facts.
void grade_text(KernelVerdict& v, const std::string& scope) {
  const std::string families = join_counts(v.failing_families);
  const std::string rows_part =
      v.rows_failed ? families + " (" + std::to_string(v.rows_failed) + " of " + scope + ")" : std::string();
  const std::string found = finding_labels(v, &any_label);
  const std::string fuzzed = found.empty() ? "" : "the fuzz campaign found " + found;
  const std::string where = rows_part.empty() ? fuzzed : fuzzed.empty() ? rows_part : rows_part + "; " + fuzzed;
  const std::string realistic =
      v.realistic_worst ? "; on realistic rows of the findings' classes, worst " + figure(*v.realistic_worst) + "x"
                        : std::string();
  const std::string own =
      v.reimplementation && v.rows_run
          ? " Against its algorithm's own bound (that of " + std::string(v.reimplementation->name) +
                ", which reimplements it): worst " + figure(v.algorithm_worst) + "x, " +
                std::to_string(v.algorithm_rows_failed) + " of the " + std::to_string(v.rows_run) + " rows run break it."
          : std::string();
  switch (v.grade) {
    case Grade::declined:
      v.headline = "Nothing ran: every row was declined.";
      v.advice = "Declined every row";
      break;
    case Grade::not_caught:
      v.headline = "Known-bad control NOT caught: within its bound on all " + scope +
                     "; the workload misses the inputs it is known to fail on.";
      v.advice = "Known-bad control NOT caught";
      break;
    case Grade::caught:
      v.headline = v.rows_failed ? "Known-bad control, do not use: breaks its bound on " +
                                         std::to_string(v.rows_failed) + " of " + scope + ": " + families +
                                         ". The checks catch it, as they must."
                                   : "Known-bad control, do not use: within its bound on the workload's rows, but "
                                     "the fuzz campaign catches it (" + found + ").";
      v.advice = v.rows_failed ? "Known-bad control, caught: do not use"
                                 : "Known-bad control, caught by fuzzing: do not use";
      break;
    case Grade::trusted:
      v.headline = "Trust it on every input tried: within " + v.bound + " on all " + scope + ", worst error " +
                     figure(v.worst_ratio) + "x the bound." + own;
      v.advice = "Trust it (worst " + figure(v.worst_ratio) + "x its bound)";
      break;
    case Grade::less_accurate:
      v.headline = "Less accurate than " + v.bound + ": up to " + figure(worst_seen(v)) + "x it, on " + where +
                     realistic + ". No NaN where the exact result is finite, no memory or call fault" +
                     (v.rows_run > v.rows_failed
                          ? "; within the bound on the other " + std::to_string(v.rows_run - v.rows_failed) + " rows."
                          : ".") +
                     own;
      v.advice = "Less accurate: up to " + figure(worst_seen(v)) + "x its bound on " +
                   (v.rows_failed ? families : found);
      break;
    case Grade::wrong: {
      std::string what;
      if (v.rows_nonfinite_mismatch)
        what = "NaN/inf where the exact result is finite (or the reverse) on " + join_counts(v.nonfinite_families);
      if (const std::string w = finding_labels(v, &wrong_label); !w.empty()) append(what, "fuzzing found " + w);
      if (v.realistic_worst && *v.realistic_worst > kWrongFactor)
        append(what, "errors up to " + figure(*v.realistic_worst) + "x " + v.bound + " on realistic rows (beyond " +
                         std::to_string(static_cast<long long>(kWrongFactor)) + "x)");
      // The findings are each a note; the headline names the rows.
      v.headline = "Wrong: " + what + "." + (rows_part.empty() ? "" : " Do not trust it on: " + rows_part + ".") +
                     (v.rows_run > v.rows_nonfinite_mismatch
                          ? " Elsewhere up to " + figure(v.worst_finite_ratio) + "x " + v.bound + realistic + "."
                          : std::string()) +
                     own;
      v.advice = "Wrong on rows like: " + (v.rows_failed ? families : found);
      break;
    }
    case Grade::unsafe: {
      std::string what;
      if (v.rows_memory)
        what = rows_text(v.rows_memory) + " wrote outside its outputs or into an input, or left an output unwritten";
      if (const std::string u = finding_labels(v, &unsafe_label); !u.empty()) append(what, "fuzzing found " + u);
      for (const fuzz::Finding* f : v.fuzz_findings)
        if (f->severity && unsafe_label(f->severity->label) && what.find(f->severity->label) == std::string::npos)
          append(what, f->severity->label + " on a realistic row");
      v.headline = "Unsafe, do not call it: " + what + ".";
      v.advice = "Unsafe: " + what;
      break;
    }
  }
}

}  // namespace

std::string speed_scope(const ReportData& data) {
  if (!data.bench) return "";
  std::vector<bench::BenchShape> shapes, out;
  for (const auto& r : data.bench->results) {
    if (std::find(shapes.begin(), shapes.end(), r.shape) == shapes.end()) shapes.push_back(r.shape);
    if (r.out_of_cache && std::find(out.begin(), out.end(), r.shape) == out.end()) out.push_back(r.shape);
  }
  const std::string criterion = out_of_cache_criterion(data.bench->cache_bytes);
  if (data.bench->cache_bytes == 0)
    return "The last-level cache's size is not known, so no bench shape is known to be out of cache: the speed "
           "columns are medians over every shape, in cache or not.";
  if (out.empty())
    return "None of the " + std::to_string(shapes.size()) + " bench shapes is out of cache (" + criterion +
           "): the speed columns are medians over shapes in cache, where a kernel can pass the streaming limit.";
  std::string names;
  for (const bench::BenchShape& s : out)
    names += (names.empty() ? "" : ", ") + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  return std::to_string(out.size()) + " of the " + std::to_string(shapes.size()) + " bench shapes " +
         (out.size() == 1 ? "is" : "are") + " out of cache for some kernel (" + names + ": " + criterion +
         "); each kernel's speed columns are medians over its shapes out of cache.";
}

std::string fuzz_summary(const ReportData& data) {
  if (!data.fuzz) return "";
  const fuzz::CampaignResult& r = data.fuzz->result;
  return std::to_string(data.fuzz->cases_per_kernel) + " generated problems per kernel, seed " +
         std::to_string(data.seed) + ", " + std::to_string(r.findings.size()) +
         (r.findings.size() == 1 ? " finding" : " findings") + " in " + figure(data.fuzz_seconds) + " s";
}

std::string finding_shape(const fuzz::Finding& f) {
  return std::to_string(f.problem.rows) + " x " + std::to_string(f.problem.cols);
}

std::string finding_class_text(const fuzz::Finding& f) {
  return f.input_class.empty() ? "when the library loads" : std::string(fuzz::input_class(f.input_class).text);
}

std::string replay_command(const fuzz::Finding& f) {
  return "normcheck check --input " + cli::shell_quote("findings/" + f.file.filename().string()) + " --kernel " +
         cli::shell_quote(f.kernel);
}

std::string workload_text(const ReportData& data) {
  if (!data.judged.empty()) return data.judged;
  const AccuracyOptions& o = data.accuracy_options;
  std::string batches;
  for (int64_t rows : o.batch_rows) batches += (batches.empty() ? "" : " and ") + std::to_string(rows);
  return std::to_string(props::kRowFamilyCount) + " families, " + lengths_text(o) + ", " +
         std::to_string(o.rows_per_family) + " rows per family and length, eps 1e-5 and 0, with and without affine parameters" +
         (batches.empty() ? std::string()
                          : "; backward kernels also on batches (many_rows) of " + batches + " rows of d = " +
                                std::to_string(o.batch_d));
}

std::string workload_name(const ReportData& data) {
  return !data.judged.empty() ? "Judged problems" : data.quick ? "Quick workload" : "Default workload";
}

std::string workload_sentence(const ReportData& data) {
  if (!data.judged.empty()) return "The kernels were judged on problems of their own: " + data.judged + ".";
  return "Every kernel of the table ran on rows of the adversarial families (" + workload_text(data) + ").";
}

std::string worst_text(const Worst& w) {
  char line[256];
  std::snprintf(line, sizeof line, "%s[row %lld, col %lld] = %a, exact %a, allowed error %.3g", w.output.c_str(),
                static_cast<long long>(w.row), static_cast<long long>(w.col), static_cast<double>(w.computed),
                w.exact, w.allowed);
  return line;
}

std::string ratio_text(const std::optional<double>& ratio, const char* missing) {
  if (!ratio) return missing;
  char s[32];
  std::snprintf(s, sizeof s, *ratio >= 0.1 ? "%.2fx" : "%.2gx", *ratio);
  return s;
}

std::string figure(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", v);
  // A ratio just under 1 must not read as 1 (at the bound): more digits then.
  if (v < 1 && std::string(s) == "1") std::snprintf(s, sizeof s, "%.6g", v);
  return s;
}

std::string describe(const RowResult& row) {
  char s[240];
  const std::string batch = row.rows > 1 ? " of " + std::to_string(row.rows) + " rows" : "";
  std::snprintf(s, sizeof s, "%s%s row #%d, d = %lld, eps = %g%s, |mean|/sigma = %s, max|x| = %s",
                row.family.c_str(), batch.c_str(), row.index, static_cast<long long>(row.d),
                static_cast<double>(row.eps), row.affine ? ", affine" : "", figure(row.mean_over_sigma).c_str(),
                figure(row.max_abs_x).c_str());
  return s;
}

std::vector<KernelVerdict> verdicts(const ReportData& data) {
  std::vector<KernelVerdict> out;
  for (const KernelAccuracy& ka : data.accuracy) {
    KernelVerdict v;
    v.kernel = ka.kernel;
    std::vector<std::string> families_run;
    for (const RowResult& r : ka.rows) {
      const Evaluation& e = r.evaluation;
      if (!e.declined.empty()) {
        ++v.rows_declined;
        add(v.decline_reasons, decline_group(e.declined));
        continue;
      }
      ++v.rows_run;
      if (std::find(families_run.begin(), families_run.end(), r.family) == families_run.end())
        families_run.push_back(r.family);
      if (!v.worst_row || e.max_error_over_bound > v.worst_ratio) {
        v.worst_ratio = e.max_error_over_bound;
        v.worst_output = e.worst.output;
        v.worst_row = &r;
      }
      v.max_ulp = std::max(v.max_ulp, e.max_ulp);
      if (!e.spec.empty()) {  // a forward norm (verify/evaluate/spec_fwd.cpp)
        v.exact_math_ulp = std::max(v.exact_math_ulp.value_or(0), e.exact_math_ulp);
        v.policy_exact_math_ulp = std::max(v.policy_exact_math_ulp.value_or(0), e.policy_exact_math_ulp);
        v.quantized = e.quantized.has_value();
        for (const OutputError& o : e.outputs)
          if (o.output == "scale") v.scale_ratio = std::max(v.scale_ratio.value_or(0), o.max_error_over_bound);
      }
      if (r.algorithm_ratio) {
        v.algorithm_worst = std::max(v.algorithm_worst, *r.algorithm_ratio);
        v.algorithm_rows_failed += !(*r.algorithm_ratio <= 1);
      }
      if (!e.nonfinite_mismatch) v.worst_finite_ratio = std::max(v.worst_finite_ratio, e.max_error_over_bound);
      if (!e.pass) {
        ++v.rows_failed;
        add(v.failing_families, r.family);
        if (e.nonfinite_mismatch) {
          ++v.rows_nonfinite_mismatch;
          char eps[40];
          std::snprintf(eps, sizeof eps, ", eps = %g", static_cast<double>(r.eps));
          add(v.nonfinite_families, r.family + eps);
        }
        if (e.out_of_bounds_write || e.wrote_input || e.unwritten_output) ++v.rows_memory;
      }
    }
    const std::string scope =
        data.judged.empty() ? std::to_string(v.rows_run) + " rows run (" + std::to_string(families_run.size()) +
                                  " families, " + lengths_text(data.accuracy_options) + ")"
                            : std::to_string(v.rows_run) + " problems judged (" + lengths_text(data.accuracy_options) + ")";
    v.bound = bound_text(*ka.kernel);
    if (const OpSpec spec = spec_of(*ka.kernel); spec.direction == Direction::fwd && !spec.linear) {
      v.policy = to_text(spec);
      v.policy_name = std::string(known_policy_name(spec));
    }
    v.reimplementation = reimplementation_of(*ka.kernel);
    fuzz_findings(data, v);
    v.grade = grade_of(v);
    grade_text(v, scope);
    if (v.rows_declined && v.rows_run)
      v.advice += "; declines " + std::to_string(v.rows_declined) + " rows (see its notes)";
    fuzz_notes(data, v);
    judged_findings(ka, v);
    failure_hints(ka, v);
    // A kernel's declared domain (kernel.h, InputRange) says what it supports:
    // the rows outside it are its limits, listed here, never findings.
    if (!v.decline_reasons.empty())
      v.notes.push_back("Declines " + std::to_string(v.rows_declined) + " rows: " + join_counts(v.decline_reasons) +
                        "." +
                        (ka.kernel->range == InputRange{}
                             ? std::string()
                             : " Declared domain: " + domain_text(ka.kernel->range) +
                                   "; rows outside it are limits, not findings."));
    ulp_note(ka, v);
    speed(data, v);
    out.push_back(std::move(v));
  }
  return out;
}

Grade grade_of(const KernelVerdict& v) {
  GradeFacts facts;
  facts.control = v.kernel && v.kernel->origin == Origin::control;
  facts.ran = v.rows_run > 0 || !v.fuzz_findings.empty();
  facts.broke = v.rows_failed > 0;
  facts.unsafe = v.rows_memory > 0;
  facts.wrong = v.rows_nonfinite_mismatch > 0;
  for (const fuzz::Finding* f : v.fuzz_findings) {
    facts.add_label(f->label);
    if (f->severity) facts.add_label(f->severity->label);
  }
  facts.realistic_worst = v.realistic_worst;
  return grade(facts);
}

std::string bound_text(const Kernel& k) {
  if (k.bound == default_bound(k.op))
    return "the default bound (what a careful float32 two-pass kernel meets, docs/accuracy.md)";
  if (k.dtype != DType::f32 && k.bound == plugin_bound(k.op, k.dtype))
    return "the default bound with the outputs rounded to " + std::string(to_string(k.dtype)) +
           " (what a careful float32 two-pass kernel storing " + std::string(to_string(k.dtype)) + " meets)";
  return "its algorithm's own bound";
}

bool run_failed(const std::vector<KernelVerdict>& v) {
  return std::any_of(v.begin(), v.end(), [](const KernelVerdict& k) {
    const bool graded_down = k.grade == Grade::less_accurate || k.grade == Grade::wrong || k.grade == Grade::unsafe;
    return (k.kernel->origin == Origin::ours && graded_down) || k.grade == Grade::not_caught;
  });
}

}  // namespace normcheck::report
