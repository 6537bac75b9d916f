#include "campaign.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "case_gen.h"
#include "generators.h"
#include "kernel_host.h"
#include "normcheck/io.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "normcheck/spec_reference.h"

namespace normcheck::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr int kBatch = 64;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

props::GenOptions generator_options(const Kernel& k) {
  props::GenOptions o = props::kernel_options(k);
  // A forward kernel, and a backward from=y (which reads the forward's y),
  // gets rows its spec's reference takes (up to kSpecReferenceMaxCols):
  // evaluate() computes the forward of the spec with it.
  const OpSpec spec = spec_of(k);
  const bool forward_reference = spec.direction == Direction::fwd || spec.from_y;
  o.long_d = forward_reference ? std::min(kLongRowCols, kSpecReferenceMaxCols) : kLongRowCols;
  o.long_one_in = kLongRowOneIn;
  // Batches of many rows for a backward that reads x: one from y needs the
  // exact forward of every row too, tens of times the cost of its backward.
  o.many_rows_one_in = spec.from_y ? 0 : kManyRowsOneIn;
  return o;
}

Problem case_problem(const rc::Gen<Problem>& gen, uint64_t seed, std::size_t kernel_index, int64_t c) {
  const rc::Random::Key key = {seed, static_cast<uint64_t>(kernel_index), static_cast<uint64_t>(c), 0x6e6f726dull};
  return gen(rc::Random(key), static_cast<int>(c % 101)).value();
}

namespace {

// A kernel's name (a plugin's text) as part of a file name: its first 80
// bytes, each outside [A-Za-z0-9._-] replaced by '_', and a leading '.' by '_'
// (not a hidden file). Never a path: no '/' survives.
std::string file_name_part(std::string_view name) {
  std::string part(name.substr(0, 80));
  for (char& c : part)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      c = '_';
  if (!part.empty() && part[0] == '.') part[0] = '_';
  return part;
}

// The finding saved as `<name part>.<label>.<hash>.txt` directly inside the
// corpus, whatever the kernel's name: the hash (16 hex digits) is of the
// problem file's body, which holds the real name (nc.kernel), so two names
// that read the same once cut and replaced get two files, and the corpus
// replay matches the name inside the file, not the file's name.
std::filesystem::path save(const CampaignOptions& options, const Finding& f) {
  std::vector<std::string> notes = {"normcheck fuzz finding: " + f.label + " on " + f.kernel + ", input class " +
                                    f.input_class + " (" + std::string(input_class(f.input_class).text) + ")"};
  if (!f.detail.empty()) notes.push_back(f.detail);
  notes.insert(notes.end(), options.notes.begin(), options.notes.end());
  const Kernel* kernel = find_kernel(f.kernel);
  const OpSpec* spec = kernel ? kernel->spec : nullptr;
  const std::string body = problem_file_text(f.op, f.dtype, f.problem, {}, f.kernel, spec);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(body));
  std::filesystem::create_directories(options.corpus_dir);
  const auto path =
      options.corpus_dir / (file_name_part(f.kernel) + "." + file_name_part(f.label) + "." + hash + ".txt");
  write_file_atomically(path, problem_file_text(f.op, f.dtype, f.problem, notes, f.kernel, spec));
  return path;
}

// Runs `problems` on `kernel` in order, each batch stopping at its first
// labelled case (a crash or hang then costs one host or child and one
// timeout, not a batch's worth) and resuming after it. visit(i, result) is
// called for every case that finished or has a label, in order; it returns
// false to stop the run.
template <typename Visit>
void run_in_order(const Kernel& kernel, std::span<const Problem> problems, const IsolationOptions& isolation,
                  Visit visit) {
  IsolationOptions first_only = isolation;
  first_only.stop_at_first_label = true;
  std::size_t start = 0;
  while (start < problems.size()) {
    const auto results = run_isolated(kernel, problems.subspan(start), first_only);
    std::size_t resume = problems.size();
    for (std::size_t j = 0; j < results.size(); ++j) {
      if (!results[j].finished && results[j].label.empty()) {  // not run: the batch stopped before it
        resume = start + j;
        break;
      }
      if (!visit(start + j, results[j])) return;
    }
    start = resume;
  }
}

}  // namespace

Shrunk shrink_finding(const Kernel& kernel, const Problem& problem, const CaseResult& result,
                      const std::string& class_id, const IsolationOptions& isolation, double seconds) {
  const auto start = Clock::now();
  Shrunk current{problem, result};
  const std::string label = result.label;
  bool progressed = true;
  while (progressed && since(start) < seconds) {
    progressed = false;
    auto seq = props::shrink_problem(current.problem);
    for (;;) {
      std::vector<Problem> batch;
      while (batch.size() < kBatch) {
        auto next = seq.next();
        if (!next) break;
        batch.push_back(std::move(*next));
      }
      if (batch.empty()) break;
      // A candidate counts when it shows the same label in the same class.
      // The batch's results are in hand, so every one is looked at; only going
      // on past another label (a new run) waits for the budget.
      run_in_order(kernel, batch, isolation, [&](std::size_t i, const CaseResult& r) {
        if (r.label == label && class_of(kernel, batch[i], r).id == class_id) {
          current = {std::move(batch[i]), r};
          progressed = true;
          return false;
        }
        return r.label.empty() || since(start) < seconds;
      });
      if (progressed || since(start) >= seconds) break;
    }
  }
  return current;
}

Severity measure_severity(const Kernel& kernel, const InputClass& input_class, uint64_t seed,
                          const IsolationOptions& isolation) {
  Severity s;
  s.rows = severity_rows_text(input_class, kernel);
  bool any = false;
  for (const SeverityProblem& sp : severity_problems(input_class, kernel, seed)) {
    const CaseResult r = run_case(kernel, sp.problem, isolation);
    if (r.finished && !r.evaluation.declined.empty()) {
      ++s.declined;
      s.each.push_back({sp.what, "declined", 0});
      continue;
    }
    ++s.problems;
    const double ratio = r.label == "nan" ? kInfinity : r.finished ? r.evaluation.max_error_over_bound : 0;
    s.each.push_back({sp.what, r.label, ratio});
    if (r.finished) s.worst_error_over_tight = std::max(s.worst_error_over_tight, r.evaluation.max_error_over_tight);
    if (!r.label.empty() && call_label(r.label)) {
      // The call itself failed (crash, memory, determinism): that is the
      // severity, and the next rows would most likely cost the same.
      s.label = r.label;
      s.worst_error_over_bound = 0;
      s.worst_row = sp.what;
      break;
    }
    if (!any || ratio > s.worst_error_over_bound) {
      any = true;
      s.worst_error_over_bound = ratio;
      s.label = r.label;
      s.worst_row = sp.what;
    }
  }
  return s;
}

std::string ratio_text(const std::string& label, double error_over_bound, double error_over_tight) {
  if (label == "nan") return "nan";
  if (!label.empty() && label != "accuracy") return label;
  char text[48];
  if (label == "accuracy" && error_over_bound <= 1 && error_over_tight > 1)
    std::snprintf(text, sizeof text, "%.3gx the tight standard", error_over_tight);
  else
    std::snprintf(text, sizeof text, "%.3gx its bound", error_over_bound);
  return text;
}

CampaignResult run_campaign(const CampaignOptions& options) {
  CampaignResult result;
  const auto start = Clock::now();
  const int shards = std::max(1, options.shard_count);
  const double per_kernel_seconds =
      options.kernels.empty() ? 0 : options.seconds / static_cast<double>(options.kernels.size());

  std::set<const HostedPlugin*> load_reported;
  // The findings whose severity is measured once every case has run: a table
  // kernel's severity rows run in this process (measure_severity), and a
  // multithreaded library (oneDNN's OpenMP pool) that starts its threads here
  // on those wide rows makes the fork server's later children deadlock in it.
  struct PendingSeverity {
    std::size_t finding;
    Kernel kernel;  // as fuzzed (with --wide-range, its whole-domain copy)
    std::string class_id;
  };
  std::vector<PendingSeverity> pending;
  for (std::size_t ki = 0; ki < options.kernels.size(); ++ki) {
    const Kernel& declared = *options.kernels[ki];
    // With wide_range the kernel runs on every problem: a copy of its row that
    // declares the whole domain, every float, eps and d (evaluate() would
    // decline the rest); what it does outside its own domain is a limit.
    Kernel k = declared;
    if (options.wide_range) k.range = InputRange{};
    const auto kernel_start = Clock::now();
    std::set<std::pair<std::string, std::string>> found;  // (label, class): one finding each
    std::set<std::string> limit_labels;
    int64_t beyond_cap = 0;
    const auto full = [&] { return static_cast<int>(found.size()) >= options.max_findings_per_kernel; };
    // A new (label, class), or nothing: the cap and the pairs already found
    // are checked before anything is shrunk or measured.
    const auto is_new = [&](const std::string& label, const std::string& class_id) {
      if (found.count({label, class_id})) return false;
      if (full()) {
        ++beyond_cap;
        return false;
      }
      return true;
    };
    // A finding from the case's result: newly found (corpus_file empty:
    // saved now) or replayed from the corpus file.
    const auto record = [&](const CaseResult& r, const std::string& class_id, Problem problem,
                            const std::filesystem::path& corpus_file) {
      found.insert({r.label, class_id});
      Finding f;
      f.kernel = k.name;
      f.label = r.label;
      f.detail = r.detail;
      f.op = k.op;
      f.dtype = k.dtype;
      f.problem = std::move(problem);
      f.from_corpus = !corpus_file.empty();
      f.input_class = class_id;
      f.error_over_bound = r.label == "nan" ? kInfinity : r.finished ? r.evaluation.max_error_over_bound : 0;
      f.error_over_tight = r.finished ? r.evaluation.max_error_over_tight : 0;
      // Not for a hang: each of its rows would cost a timeout (a kernel that
      // sleeps, the kernel host's wall-clock backstop) to say "hang" again.
      if (options.severity && r.label != "hang") pending.push_back({result.findings.size(), k, class_id});
      f.file = f.from_corpus ? corpus_file : save(options, f);
      result.findings.push_back(std::move(f));
    };

    // A library that changes the floating-point control state when it loads
    // changes the arithmetic of every process that loads it: one finding for
    // the library, with no problem (loading it is the defect), on the first
    // of its kernels fuzzed.
    if (const HostedPlugin* plugin = hosted_plugin_of(declared);
        plugin && !plugin->load_fp_change().empty() && load_reported.insert(plugin).second) {
      found.insert({"fp_environment", ""});
      Finding f;
      f.kernel = k.name;
      f.label = "fp_environment";
      f.detail = "the library " + plugin->path().filename().string() +
                 " changes the floating-point control state when it loads (" + plugin->load_fp_change() +
                 "); its kernels run, and are judged, in the state it sets";
      f.op = k.op;
      f.dtype = k.dtype;
      result.findings.push_back(std::move(f));
    }

    // The corpus first: its problem files that name this kernel.
    if (!options.corpus_dir.empty() && std::filesystem::is_directory(options.corpus_dir)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(options.corpus_dir))
        if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& path : files) {
        ProblemFile file;
        try {
          file = read_problem_file(path);
        } catch (const RowFileError&) {
          continue;  // not a problem file of ours
        }
        if (!file.whole || file.kernel != k.name || file.op != k.op || file.dtype != k.dtype) continue;
        const auto results = run_isolated(k, file.problems, options.isolation);
        for (std::size_t i = 0; i < results.size(); ++i) {
          if (results[i].label.empty()) continue;
          const std::string class_id(class_of(k, file.problems[i], results[i]).id);
          if (!is_new(results[i].label, class_id)) continue;
          record(results[i], class_id, file.problems[i], path);
        }
      }
    }

    const rc::Gen<Problem> gen = props::gen_problem(generator_options(k));
    JudgedTally& tally = result.judged.emplace_back(std::string(k.name), JudgedTally{}).second;
    int64_t done = 0;
    const int jobs = std::max(1, options.jobs);
    for (int64_t c0 = 0;; c0 += kBatch * jobs) {
      if (options.cases > 0 ? done >= options.cases : since(kernel_start) >= per_kernel_seconds) break;
      // Up to `jobs` batches of consecutive case numbers, run at once.
      std::vector<std::vector<Problem>> batches;
      int64_t planned = done;
      for (int j = 0; j < jobs; ++j) {
        std::vector<Problem> batch;
        for (int64_t c = c0 + j * kBatch; c < c0 + (j + 1) * kBatch; ++c) {
          if (options.cases > 0 && planned >= options.cases) break;
          batch.push_back(case_problem(gen, options.seed, ki, c * shards + options.shard_index));
          ++planned;
        }
        if (batch.empty()) break;
        batches.push_back(std::move(batch));
      }
      // Batches run at once each on a thread of their own; a plugin's single
      // batch on this thread (a thread costs more than a small batch of
      // hosted cases). The fork server always forks from a fresh thread: a
      // child forked from a thread that has run an OpenMP region (oneDNN's
      // rows, in the report's accuracy phase) deadlocks in its next one.
      const auto policy =
          batches.size() == 1 && hosted_plugin_of(k) ? std::launch::deferred : std::launch::async;
      std::vector<std::future<std::vector<CaseResult>>> running;
      for (const auto& batch : batches)
        running.push_back(std::async(policy, [&k, &batch, &options] {
          return run_isolated(k, batch, options.isolation);
        }));
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const std::vector<Problem>& batch = batches[b];
        const auto results = running[b].get();
        done += static_cast<int64_t>(batch.size());
        result.cases += static_cast<int64_t>(batch.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
          count_case(tally, results[i]);
          const std::string& label = results[i].label;
          if (label.empty()) continue;
          if (options.wide_range) {
            const std::string outside = declines(declared, request_for(declared, batch[i]));
            if (!outside.empty()) {
              if (limit_labels.insert(label).second) {
                Finding f;
                f.kernel = k.name;
                f.label = label;
                f.detail = outside + "; " + results[i].detail;
                f.op = k.op;
                f.dtype = k.dtype;
                f.problem = batch[i];
                result.limits.push_back(std::move(f));
              }
              continue;
            }
          }
          if (full()) {  // not classified either: the cap spares that work too
            ++beyond_cap;
            continue;
          }
          const std::string class_id(class_of(k, batch[i], results[i]).id);
          if (!is_new(label, class_id)) continue;
          // Shrinking shares the budget: at most a quarter of the kernel's share
          // of --seconds (at least 2 s), and never more than shrink_seconds.
          const double shrink_budget =
              options.cases > 0 ? options.shrink_seconds
                                : std::min(options.shrink_seconds, std::max(2.0, per_kernel_seconds / 4));
          Shrunk shrunk = shrink_finding(k, batch[i], results[i], class_id, options.isolation, shrink_budget);
          record(shrunk.result, class_id, std::move(shrunk.problem), {});
        }
      }
      if (options.progress) options.progress(std::string(k.name), done, result.findings.size(), since(start));
    }
    if (beyond_cap > 0) result.beyond_cap.emplace_back(std::string(k.name), beyond_cap);
  }
  // By kernel and class: the rows depend on the class alone.
  std::map<std::pair<std::string, std::string>, Severity> severities;
  for (const PendingSeverity& p : pending) {
    const auto key = std::make_pair(std::string(p.kernel.name), p.class_id);
    auto it = severities.find(key);
    if (it == severities.end())
      it = severities.emplace(key, measure_severity(p.kernel, input_class(p.class_id), options.seed, options.isolation))
               .first;
    result.findings[p.finding].severity = it->second;
  }
  result.seconds = since(start);
  return result;
}

std::string severity_text(const Severity& s) {
  std::string text = "on realistic rows (" + s.rows + "): ";
  if (s.problems == 0) return text + "the kernel declines them all";
  text += "worst " + ratio_text(s.label, s.worst_error_over_bound, s.worst_error_over_tight) + " (" + s.worst_row + ")";
  if (s.label.empty()) text += ", within its bound";
  if (s.declined > 0) text += "; " + std::to_string(s.declined) + " declined";
  return text;
}

}  // namespace normcheck::fuzz
