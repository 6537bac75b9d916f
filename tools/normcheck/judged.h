// Nothing judged is never a pass: the one rule every subcommand that judges
// kernels (check, fuzz, identify, judge) applies to its per-kernel counts of
// judged and declined cases (JudgedTally, evaluate.h). A kernel with some
// cases declined has the count printed beside its verdict; a kernel with none
// judged has no verdict, and the command exits 2 naming it and the reason.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"
#include "normcheck/evaluate.h"

namespace normcheck::cli {

using KernelTallies = std::vector<std::pair<std::string, JudgedTally>>;

// judged, declined and the first decline's reason (null when none), for --json.
inline nlohmann::json judged_json(const JudgedTally& t) {
  return {{"judged", t.judged},
          {"declined", t.declined},
          {"declined_reason", t.declined ? nlohmann::json(t.first_decline) : nlohmann::json(nullptr)}};
}

// What a kernel with nothing judged is told: every case declined with the
// reason, or no case run at all (a time budget spent before the first).
inline std::string unjudged_text(const JudgedTally& t, std::string_view unit) {
  return t.declined ? "nothing judged: " + t.declined_text(unit)
                    : "nothing judged: no " + std::string(unit) + " ran";
}

// `verdict` (kExitOk or kExitFinding), or kExitUsage when a kernel of
// `tallies` had nothing judged; each such kernel is named on stderr.
inline int exit_code(const KernelTallies& tallies, int verdict, std::string_view unit = "cases") {
  bool unjudged = false;
  for (const auto& [kernel, t] : tallies) {
    if (!t.nothing_judged()) continue;
    unjudged = true;
    std::fprintf(stderr, "normcheck: %s: %s\n", kernel.c_str(), unjudged_text(t, unit).c_str());
  }
  return unjudged ? kExitUsage : verdict;
}

}  // namespace normcheck::cli
