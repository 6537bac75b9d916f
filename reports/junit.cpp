// junit.xml: one testcase per kernel x check (grade, within_bound, nonfinite,
// memory, fuzz, baseline), one per claim, so CI systems that read JUnit show
// the report. A control's grade and within_bound cases pass when the control
// is caught (it breaks its bound somewhere), as a negative control must.
#include <sstream>

#include "writers.h"

namespace normcheck::report {
namespace {

struct Case {
  std::string name, classname;
  std::string failure;  // empty: passed
  std::string out;      // system-out
  bool skipped = false;
};

void write_suite(std::ostringstream& s, const std::string& name, const std::vector<Case>& cases) {
  int failures = 0, skipped = 0;
  for (const Case& c : cases) {
    failures += !c.failure.empty();
    skipped += c.skipped;
  }
  s << "  <testsuite name=\"" << xml_escape(name) << "\" tests=\"" << cases.size() << "\" failures=\"" << failures
    << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
  for (const Case& c : cases) {
    s << "    <testcase name=\"" << xml_escape(c.name) << "\" classname=\"" << xml_escape(c.classname) << "\">";
    if (c.skipped) s << "<skipped message=\"" << xml_escape(c.out) << "\"/>";
    if (!c.failure.empty())
      s << "<failure message=\"" << xml_escape(c.failure) << "\">" << xml_escape(c.failure) << "</failure>";
    if (!c.out.empty() && !c.skipped) s << "<system-out>" << xml_escape(c.out) << "</system-out>";
    s << "</testcase>\n";
  }
  s << "  </testsuite>\n";
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string junit_report(const ReportData& data, const std::vector<KernelVerdict>& verdicts,
                         const std::optional<BaselineCheck>& baseline_check) {
  std::vector<Case> kernels;
  for (const KernelVerdict& v : verdicts) {
    const std::string name(v.kernel->name);
    const std::string cls = "normcheck.kernels." + name;
    std::string notes;
    for (const std::string& n : v.notes) notes += n + "\n";
    if (v.grade == Grade::declined) {
      kernels.push_back({"within_bound", cls, "", v.headline + "\n" + notes, true});
      continue;
    }
    // The grade: anything below trusted fails (with the headline), as does a
    // control not caught.
    Case graded{"grade", cls, "", std::string(to_string(v.grade))};
    if (v.grade != Grade::trusted && v.grade != Grade::caught) graded.failure = v.headline;
    kernels.push_back(graded);
    Case bound{"within_bound", cls, "", v.headline + "\n" + notes};
    const bool control = v.kernel->origin == Origin::control;
    if (control ? v.rows_failed == 0 : v.rows_failed > 0) bound.failure = v.headline;
    kernels.push_back(bound);
    Case nonfinite{"nonfinite", cls, "",
                   std::to_string(v.rows_nonfinite_mismatch) + " rows with NaN/inf where the exact result is finite, or the reverse"};
    if (!control && v.rows_nonfinite_mismatch > 0) nonfinite.failure = nonfinite.out;
    kernels.push_back(nonfinite);
    Case memory{"memory", cls, "", std::to_string(v.rows_memory) +
                                       " rows that wrote outside an output, into an input, or left an output unwritten"};
    if (v.rows_memory > 0) memory.failure = memory.out;
    kernels.push_back(memory);
    if (data.fuzz) {
      // A control is caught by the rows or by fuzzing: its findings pass.
      Case fuzzed{"fuzz", cls, "", std::to_string(v.fuzz_findings.size()) + " findings in " +
                                       std::to_string(data.fuzz->cases_per_kernel) + " generated problems"};
      for (const fuzz::Finding* f : v.fuzz_findings)
        fuzzed.out += "\n" + f->label + " (" + finding_class_text(*f) + "): " + replay_command(*f);
      if (!control && !v.fuzz_findings.empty()) fuzzed.failure = fuzzed.out;
      kernels.push_back(fuzzed);
    }
    if (baseline_check) {
      Case base{"baseline", cls, "", "no figure worse than the baseline"};
      for (const Regression& r : baseline_check->regressions)
        if (r.kernel == name)
          base.failure += r.output + " " + r.metric + " " + figure(r.before) + " -> " + figure(r.after) + " on " +
                          r.input + "\n";
      kernels.push_back(base);
    }
  }
  std::vector<Case> claims;
  for (const ClaimRun& c : data.claims) {
    Case k{std::string(c.claim->id), "normcheck.claims", "",
           std::string(to_string(c.result.verdict)) + ": " + c.result.figure};
    // A REFUTED claim is a finding about the seed's math, reported; only an
    // undecided claim is a failure (as `normcheck claims` exits).
    if (c.result.verdict == Verdict::unchecked) k.failure = k.out;
    claims.push_back(k);
  }
  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"normcheck report\">\n";
  write_suite(s, "normcheck.kernels", kernels);
  write_suite(s, "normcheck.claims", claims);
  s << "</testsuites>\n";
  return s.str();
}

}  // namespace normcheck::report
