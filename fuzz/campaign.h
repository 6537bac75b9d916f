// A fuzz campaign: problems from the property suite's generators
// (properties/generators.h) run on kernels in a child process (isolation.h);
// each finding shrunk (shrink_problem) to the smallest problem that still
// shows the same label, and saved as a problem file (row_file.h) that
// `normcheck check --input FILE` replays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "isolation.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

struct CampaignOptions {
  std::vector<const Kernel*> kernels;
  int64_t cases = 0;        // generated cases per kernel (0: use seconds)
  double seconds = 0;       // wall-clock budget of the whole campaign, split over the kernels
  uint64_t seed = 0;
  int jobs = 1;                          // batches run at once (each in its own child)
  int shard_index = 0, shard_count = 1;  // this run generates case numbers = shard_index mod shard_count
  std::filesystem::path corpus_dir;      // findings saved here; its files for a kernel replayed first
  IsolationOptions isolation;
  double shrink_seconds = 20;            // budget for shrinking one finding
  // Also generate beyond each kernel's declared input range (every float,
  // NaN and inf included). What a kernel does there is reported as one of its
  // limits, not as a finding: it never promised anything there.
  bool wide_range = false;
  std::vector<std::string> notes;        // extra comment lines for saved files
  // Called after every batch (for a progress line).
  std::function<void(const std::string& kernel, int64_t cases, std::size_t findings, double seconds)> progress;
};

struct Finding {
  std::string kernel;
  std::string label;
  std::string detail;
  Op op{};
  DType dtype{};
  Problem problem;               // shrunk
  std::filesystem::path file;    // where it was saved (empty: a library's loading is the finding, no problem)
  bool from_corpus = false;      // replayed from the corpus, not newly found
};

struct CampaignResult {
  int64_t cases = 0;             // cases run, corpus replays and shrink candidates not counted
  double seconds = 0;
  std::vector<Finding> findings; // at most one per (kernel, label)
  // wide_range: labelled cases outside the kernel's declared range (file
  // empty: limits are not saved), at most one per (kernel, label).
  std::vector<Finding> limits;
};

CampaignResult run_campaign(const CampaignOptions& options);

// Greedy shrinking: repeatedly takes the first candidate of shrink_problem()
// that still shows `label` on `kernel`, until none does or the budget ends.
Problem shrink_finding(const Kernel& kernel, const Problem& problem, const std::string& label,
                       const IsolationOptions& isolation, double seconds, std::string* detail);

}  // namespace normcheck::fuzz
