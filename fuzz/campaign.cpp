#include "campaign.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <string_view>

#include "generators.h"
#include "kernel_host.h"
#include "normcheck/io.h"
#include "normcheck/row_file.h"

namespace normcheck::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr int kBatch = 64;

// The generator's options for a kernel: its op and declared range, with
// non-finite inputs only when the range says the kernel handles them.
props::GenOptions gen_options(const Kernel& k) {
  props::GenOptions o;
  o.op = k.op;
  o.range = k.range;
  o.nonfinite = k.range.handles_nonfinite;
  return o;
}

// Case number c of a campaign: its own random stream, and a size that cycles
// through RapidCheck's 0..100 so that small problems come first and often.
Problem case_problem(const rc::Gen<Problem>& gen, uint64_t seed, std::size_t kernel_index, int64_t c) {
  const rc::Random::Key key = {seed, static_cast<uint64_t>(kernel_index), static_cast<uint64_t>(c), 0x6e6f726dull};
  return gen(rc::Random(key), static_cast<int>(c % 101)).value();
}

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
  std::vector<std::string> notes = {"normcheck fuzz finding: " + f.label + " on " + f.kernel};
  if (!f.detail.empty()) notes.push_back(f.detail);
  notes.insert(notes.end(), options.notes.begin(), options.notes.end());
  const std::string body = problem_file_text(f.op, f.dtype, f.problem, {}, f.kernel);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(body));
  std::filesystem::create_directories(options.corpus_dir);
  const auto path =
      options.corpus_dir / (file_name_part(f.kernel) + "." + file_name_part(f.label) + "." + hash + ".txt");
  write_file_atomically(path, problem_file_text(f.op, f.dtype, f.problem, notes, f.kernel));
  return path;
}

}  // namespace

Problem shrink_finding(const Kernel& kernel, const Problem& problem, const std::string& label,
                       const IsolationOptions& isolation, double seconds, std::string* detail) {
  const auto start = Clock::now();
  IsolationOptions first_only = isolation;
  first_only.stop_at_first_label = true;
  Problem current = problem;
  bool progressed = true;
  while (progressed && since(start) < seconds) {
    progressed = false;
    auto seq = props::shrink_problem(current);
    for (;;) {
      std::vector<Problem> batch;
      while (batch.size() < kBatch) {
        auto next = seq.next();
        if (!next) break;
        batch.push_back(std::move(*next));
      }
      if (batch.empty()) break;
      const auto results = run_isolated(kernel, batch, first_only);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!results[i].label.empty() && results[i].label != label) break;  // stopped there
        if (results[i].label == label) {
          current = std::move(batch[i]);
          if (detail) *detail = results[i].detail;
          progressed = true;
          break;
        }
      }
      if (progressed || since(start) >= seconds) break;
    }
  }
  return current;
}

CampaignResult run_campaign(const CampaignOptions& options) {
  CampaignResult result;
  const auto start = Clock::now();
  const int shards = std::max(1, options.shard_count);
  const double per_kernel_seconds =
      options.kernels.empty() ? 0 : options.seconds / static_cast<double>(options.kernels.size());

  std::set<const HostedPlugin*> load_reported;
  for (std::size_t ki = 0; ki < options.kernels.size(); ++ki) {
    const Kernel& declared = *options.kernels[ki];
    // With wide_range the kernel runs on every float: a copy of its row that
    // declares the whole range (evaluate() would decline the rest).
    Kernel k = declared;
    if (options.wide_range) k.range = InputRange{};
    const auto kernel_start = Clock::now();
    std::set<std::string> labels;  // one finding per label
    std::set<std::string> limit_labels;
    const auto record = [&](Finding f) {
      if (!labels.insert(f.label).second) return;
      if (!f.from_corpus) f.file = save(options, f);
      result.findings.push_back(std::move(f));
    };

    // A library that changes the floating-point control state when it loads
    // changes the arithmetic of every process that loads it: one finding for
    // the library, with no problem (loading it is the defect), on the first
    // of its kernels fuzzed.
    if (const HostedPlugin* plugin = hosted_plugin_of(declared);
        plugin && !plugin->load_fp_change().empty() && load_reported.insert(plugin).second) {
      labels.insert("fp_environment");
      result.findings.push_back({std::string(k.name), "fp_environment",
                                 "the library " + plugin->path().filename().string() +
                                     " changes the floating-point control state when it loads (" +
                                     plugin->load_fp_change() +
                                     "); its kernels run, and are judged, in the state it sets",
                                 k.op, k.dtype, Problem{}, {}, false});
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
        for (std::size_t i = 0; i < results.size(); ++i)
          if (!results[i].label.empty())
            record({std::string(k.name), results[i].label, results[i].detail, k.op, k.dtype, file.problems[i],
                    path, true});
      }
    }

    const rc::Gen<Problem> gen = props::gen_problem(gen_options(k));
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
      std::vector<std::future<std::vector<CaseResult>>> running;
      for (const auto& batch : batches)
        running.push_back(std::async(std::launch::async, [&k, &batch, &options] {
          return run_isolated(k, batch, options.isolation);
        }));
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const std::vector<Problem>& batch = batches[b];
        const auto results = running[b].get();
        done += static_cast<int64_t>(batch.size());
        result.cases += static_cast<int64_t>(batch.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
          const std::string& label = results[i].label;
          if (label.empty()) continue;
          if (options.wide_range) {
            const std::string outside = declines(declared, request_for(declared, batch[i]));
            if (!outside.empty()) {
              if (limit_labels.insert(label).second)
                result.limits.push_back({std::string(k.name), label, outside + "; " + results[i].detail, k.op,
                                         k.dtype, batch[i], {}, false});
              continue;
            }
          }
          if (labels.count(label)) continue;
          std::string detail = results[i].detail;
          // Shrinking shares the budget: at most a quarter of the kernel's share
          // of --seconds (at least 2 s), and never more than shrink_seconds.
          const double shrink_budget =
              options.cases > 0 ? options.shrink_seconds
                                : std::min(options.shrink_seconds, std::max(2.0, per_kernel_seconds / 4));
          const Problem shrunk = shrink_finding(k, batch[i], label, options.isolation, shrink_budget, &detail);
          record({std::string(k.name), label, detail, k.op, k.dtype, shrunk, {}, false});
        }
      }
      if (options.progress) options.progress(std::string(k.name), done, result.findings.size(), since(start));
    }
  }
  result.seconds = since(start);
  return result;
}

}  // namespace normcheck::fuzz
