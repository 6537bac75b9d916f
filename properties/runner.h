// Runs one property on one kernel with RapidCheck and reports the way the
// project asks: the seed always; on failure RapidCheck's reproduce string, the
// shrunk problem as hex floats and, when NORMCHECK_SAVE_CORPUS=DIR is set, the
// counterexample saved to DIR in the corpus format (corpus.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace rc {
template <typename T> class Gen;
}

namespace normcheck::props {

struct RunParams {
  uint64_t seed = 0;
  int max_success = 100;
  int max_size = 100;
  bool shrink = true;
};

// RapidCheck's configuration (RC_PARAMS) with NORMCHECK_SEED, when set,
// replacing the seed (normcheck::seed_from_env: a bad one throws
// std::invalid_argument naming it).
RunParams default_run_params();

struct Outcome {
  bool failed = false;
  bool gave_up = false;
  int successes = 0;
  uint64_t seed = 0;
  std::string report;                   // RapidCheck's own message (distribution or failure)
  std::string reproduce;                // RC_PARAMS="reproduce=..." that replays the failure
  std::optional<Problem> counterexample;  // the shrunk failing problem
};

// A property body: RC_ASSERT / RC_PRE on one problem.
using PropertyBody = std::function<void(const Problem&)>;

// Checks `body` on problems from `gen`; `id` ("<kernel>/<property>") keys
// RapidCheck's reproduce map. Tags every case with tags_of().
Outcome check_property(const std::string& id, const rc::Gen<Problem>& gen, const PropertyBody& body,
                       const RunParams& params);

// Prints the outcome (seed, tags, and on failure the reproduce string and the
// counterexample) and saves the corpus file if NORMCHECK_SAVE_CORPUS is set.
// Returns the text printed.
std::string describe_outcome(const Kernel& kernel, std::string_view property, const Outcome& outcome);

}  // namespace normcheck::props
