// report.html: one self-contained page (no script, nothing fetched). The
// verdicts come first, as a table a user picks a kernel from; each kernel links
// to its details; then the plots (gnuplot SVG as data: URIs, so their ids and
// styles cannot clash), the claims and the baseline.
#include <sstream>

#include "results_json.h"
#include "writers.h"

namespace normcheck::report {
namespace {

std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string e(const std::string& s) { return xml_escape(s); }
std::string e(std::string_view s) { return xml_escape(std::string(s)); }

std::string anchor(const Kernel& k) {
  std::string a = "k-";
  for (char c : k.name) a += c == '.' ? '-' : c;
  return a;
}

// The plot frame colour (#b4a0dc) is used nowhere else on the page: the screenshot test
// (tests/reports) finds the plot areas by it.
constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1250px; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.5em; text-align: left; vertical-align: top; font-size: 0.92em; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.status { font-weight: bold; padding: 0.1em 0.4em; border-radius: 3px; white-space: nowrap; }
.trusted { background: #d7f0d7; } .less-accurate { background: #f8ecc8; } .wrong { background: #f8d0d0; }
.unsafe { background: #e8a0a0; } .caught { background: #e4e4e4; } .not-caught { background: #f8d0d0; }
.declined { background: #e4e4e4; }
.read { background: #f6f6f0; border-left: 4px solid #bb9; padding: 0.5em 1em; }
figure.plot { margin: 1.2em 0; width: 776px; }
.plotarea { border: 4px solid #b4a0dc; padding: 4px; width: 760px; background: #fff; }
.plotarea img { display: block; }
figcaption { font-size: 0.88em; color: #333; margin-top: 0.4em; }
.missing { color: #a00; }
code { font-size: 0.95em; }
)";

}  // namespace

std::string html_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                        const std::vector<Plot>& plots, const std::optional<BaselineCheck>& baseline_check) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>normcheck report</title>"
    << "<style>" << kStyle << "</style></head><body>\n"
    << "<h1>normcheck report</h1>\n<p>" << workload_name(data) << ", seed " << data.seed
    << (data.judged.empty() ? " (<code>--seed</code> or <code>NORMCHECK_SEED</code> reproduces it)"
                            : " (the problems' seed)")
    << ", SIMD target " << e(data.simd_target)
    << ", " << figure(data.seconds) << " s, started " << e(data.started_utc) << ". " << e(workload_sentence(data)) << "</p>\n";
  if (data.quick && data.bench)
    s << "<p><b>Quick run:</b> the bench used small shapes and short samples, so its speeds are a smoke test, not "
         "figures to quote; run without --quick for the standard shapes.</p>\n";

  s << "<h2 id=\"verdicts\">Which kernel to trust, on which inputs, how fast</h2>\n"
    << "<div class=\"read\"><p><b>How to read it.</b> A kernel is held to an a-priori error bound derived from its "
       "algorithm and the row's condition (|mean|/sigma, d). <b>error/bound</b> is what to act on: at most 1 means "
       "within the promise. <b>max ULP</b> is the ULP error where the exact value is not tiny against the row's scale "
       "(the magnitude the output is computed from), and the error in ULPs of that scale where it is; NaN and inf "
       "are judged by error/bound, not counted in ULP. <b>Grade</b>: <i>trusted</i> within its bound on every row "
       "and fuzz case; <i>less accurate</i> breaks it, by at most " << static_cast<long long>(kWrongFactor) << "x on realistic rows, "
       "never with NaN; <i>wrong</i> NaN/inf where the exact result is finite, outputs that differ run to run, or "
       "beyond that factor on realistic rows; <i>unsafe</i> wrote outside its outputs or into an input, left an "
       "output unwritten, changed the caller's floating-point state, crashed or hung (docs/report.md, "
       "\"Grades\"). <b>Speed</b> is the median, over the bench shapes out of cache (bytes moved per call at least "
    << figure(bench::kOutOfCacheFactor) << "x the last-level cache), of the throughput as a ratio to the streaming "
       "limit of the kernel's direction, measured in the same run (reading the inputs and writing the output with "
       "non-temporal stores: 1 = all that the memory allows), and to oneDNN's kernel for the same op; a kernel "
       "with no shape out of cache gets the median over its shapes, and its speed line says so. "
    << e(speed_scope(data)) << "</p></div>\n"
    << "<table class=\"verdicts\"><tr><th>kernel</th><th>op</th><th>origin</th><th>grade</th><th>what to do</th>"
       "<th>rows failed / run / declined</th><th>worst error/bound</th><th>max ULP</th><th>vs limit</th>"
       "<th>vs oneDNN</th></tr>\n";
  for (const KernelVerdict& v : verdicts) {
    std::string cls(to_string(v.grade));
    for (char& c : cls) c = c == ' ' ? '-' : c;
    s << "<tr><td><a href=\"#" << anchor(*v.kernel) << "\"><code>" << e(v.kernel->name) << "</code></a></td><td>"
      << to_string(v.kernel->op) << " (" << to_string(v.kernel->dtype) << ")</td><td>" << to_string(v.kernel->origin)
      << "</td><td><span class=\"status " << cls << "\">" << e(to_string(v.grade)) << "</span></td><td>" << e(v.advice)
      << "</td><td class=\"num\">" << v.rows_failed << " / " << v.rows_run << " / " << v.rows_declined
      << "</td><td class=\"num\">" << figure(v.worst_ratio) << "</td><td class=\"num\">" << figure(v.max_ulp)
      << "</td><td class=\"num\">" << ratio_text(v.stream_ratio, "&ndash;") << "</td><td class=\"num\">"
      << ratio_text(v.onednn_ratio, "&ndash;") << "</td></tr>\n";
  }
  s << "</table>\n";

  const auto section = [&](const std::string& id, const std::string& title, const std::string& intro) {
    s << "<h2 id=\"" << id << "\">" << e(title) << "</h2>\n";
    if (!intro.empty()) s << "<p>" << e(intro) << "</p>\n";
    int shown = 0;
    for (const Plot& p : plots) {
      if (p.section != id) continue;
      ++shown;
      s << "<figure class=\"plot\" id=\"plot-" << e(p.id) << "\">";
      if (!p.svg.empty())
        s << "<div class=\"plotarea\"><img alt=\"" << e(p.title) << "\" src=\"data:image/svg+xml;base64,"
          << base64(p.svg) << "\"></div>";
      else
        s << "<p class=\"missing\">" << e(p.error) << "</p>";
      s << "<figcaption><b>" << e(p.title) << ".</b> " << e(p.caption) << "</figcaption></figure>\n";
    }
    if (shown == 0)
      s << "<p class=\"missing\">No plots: "
        << (gnuplot_available() ? "nothing to plot in this run." : "gnuplot was not found (scripts/setup.sh installs gnuplot-nox).")
        << "</p>\n";
  };
  section("accuracy", "Error against the row's condition", "");
  section("distribution", "Error distributions", "");
  section("speed", "Throughput against the streaming limit",
          data.bench            ? ""
          : data.judged.empty() ? "The bench was left out of this run (--no-bench)."
                                : "Judged kernels are judged from their outputs: their speed is not measured.");

  if (data.fuzz) {
    s << "<h2 id=\"fuzz\">Fuzzing</h2>\n<p>" << e(fuzz_summary(data))
      << ": problems drawn by the property suite's generators, one finding per kernel, label and input class, "
         "each shrunk to the smallest problem that still shows it in its class and saved in <code>findings/</code> "
         "next to this page, and measured on realistic rows of its class.</p>\n";
    if (!data.fuzz->result.findings.empty()) {
      s << "<table><tr><th>kernel</th><th>origin</th><th>found</th><th>input class</th><th>problem</th>"
           "<th>error/bound</th><th>on realistic rows of its class</th><th>what</th><th>replay</th></tr>\n";
      for (const KernelVerdict& v : verdicts)
        for (const fuzz::Finding* f : v.fuzz_findings)
          s << "<tr><td><code>" << e(f->kernel) << "</code></td><td>" << to_string(v.kernel->origin) << "</td><td>"
            << e(f->label) << "</td><td>" << e(finding_class_text(*f)) << "</td><td class=\"num\">"
            << e(finding_shape(*f)) << "</td><td class=\"num\">" << e(fuzz::ratio_text(f->label, f->error_over_bound, f->error_over_tight))
            << "</td><td>" << e(f->severity ? fuzz::severity_text(*f->severity) : "") << "</td><td>" << e(f->detail)
            << "</td><td><code>" << e(replay_command(*f)) << "</code></td></tr>\n";
      s << "</table>\n";
    }
  }

  if (data.judged.empty()) {  // judged kernels' reports have no claims
    s << "<h2 id=\"claims\">Claims: the math practitioners rely on, checked by computation</h2>\n"
      << "<table><tr><th>id</th><th>verdict</th><th>figure</th><th>title</th><th>source</th></tr>\n";
    for (const ClaimRun& c : data.claims)
      s << "<tr><td>" << e(c.claim->id) << "</td><td>" << to_string(c.result.verdict) << "</td><td>"
        << e(c.result.figure) << "</td><td>" << e(c.claim->title) << "</td><td>" << e(c.claim->source)
        << "</td></tr>\n";
    s << "</table>\n";
    section("claims", "Claims' series", "");
  }

  if (baseline_check) {
    s << "<h2 id=\"baseline\">Accuracy baseline</h2>\n";
    if (baseline_check->regressions.empty()) s << "<p>No kernel got worse than the baseline.</p>\n";
    else {
      s << "<table><tr><th>kernel</th><th>output</th><th>metric</th><th>baseline</th><th>now</th><th>on</th></tr>\n";
      for (const Regression& r : baseline_check->regressions)
        s << "<tr><td><code>" << e(r.kernel) << "</code></td><td>" << e(r.output) << "</td><td>" << e(r.metric)
          << "</td><td class=\"num\">" << figure(r.before) << "</td><td class=\"num\">" << figure(r.after)
          << "</td><td>" << e(r.input) << "</td></tr>\n";
      s << "</table>\n";
    }
    for (const std::string& n : baseline_check->notes) s << "<p>Note: " << e(n) << "</p>\n";
  }

  s << "<h2 id=\"kernels\">Kernel details</h2>\n";
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const KernelVerdict& v = verdicts[i];
    s << "<h3 id=\"" << anchor(*v.kernel) << "\"><code>" << e(v.kernel->name) << "</code></h3>\n<p>"
      << e(v.kernel->algorithm) << "</p>\n<p><b>" << e(to_string(v.grade)) << ": " << e(v.headline)
      << "</b></p>\n<ul><li>Held to " << e(v.bound) << ".</li>";
    if (!v.policy.empty()) {
      s << "<li>Rounding policy: <code>" << e(v.policy) << "</code>"
        << (v.policy_name.empty() ? std::string() : " (" + e(v.policy_name) + ")") << ", which its grade judges it against.";
      if (v.exact_math_ulp && v.quantized)
        s << " Against exact math: its codes within " << figure(*v.exact_math_ulp) << " codes of those exact math "
          << "casts to; the policy's own within " << figure(*v.policy_exact_math_ulp) << " codes."
          << (v.scale_ratio ? " Its scale's worst error: " + figure(*v.scale_ratio) + " of its range's reach." : "");
      else if (v.exact_math_ulp)
        s << " Against exact math: y within " << figure(*v.exact_math_ulp) << " ULP of y's format; the policy's own "
          << "correctly rounded y within " << figure(*v.policy_exact_math_ulp) << " ULP.";
      s << "</li>";
    }
    for (const std::string& n : v.notes) s << "<li>" << e(n) << "</li>";
    s << "<li>Speed: " << e(v.speed) << ".</li></ul>\n";
    const auto worsts = output_worsts(data.accuracy[i]);
    if (!worsts.empty()) {
      s << "<table><tr><th>output</th><th>max error/bound</th><th>on</th><th>max ULP</th></tr>\n";
      for (const OutputWorst& w : worsts)
        s << "<tr><td>" << e(w.output) << "</td><td class=\"num\">" << figure(w.max_error_over_bound) << "</td><td>"
          << (w.ratio_row ? e(describe(*w.ratio_row)) : "") << "</td><td class=\"num\">" << figure(w.max_ulp)
          << "</td></tr>\n";
      s << "</table>\n";
    }
  }
  s << "<p>Every figure of this page is in results.json (schema version " << kResultsSchemaVersion
    << ", docs/report.md).</p>\n</body></html>\n";
  return s.str();
}

}  // namespace normcheck::report
