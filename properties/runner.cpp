#include "runner.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "corpus.h"
#include "generators.h"
#include "normcheck/row_file.h"
#include "normcheck/seed.h"

namespace normcheck::props {
namespace {

// RapidCheck reports through a listener; we only need its verdict.
struct QuietListener final : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

RunParams default_run_params() {
  const auto& config = rc::detail::configuration().testParams;
  RunParams params;
  params.seed = config.seed;
  params.max_success = config.maxSuccess;
  params.max_size = config.maxSize;
  params.shrink = !config.disableShrinking;
  if (const auto seed = seed_from_env()) params.seed = *seed;
  return params;
}

Outcome check_property(const std::string& id, const rc::Gen<Problem>& gen, const PropertyBody& body,
                       const RunParams& params) {
  // The last failing case RapidCheck ran: shrinking accepts every failing
  // candidate and stops when none fails, so the last failure is the shrunk one.
  std::optional<Problem> last_failure;
  const auto property = [&] {
    const Problem problem = *gen;
    for (const auto& tag : tags_of(problem)) RC_TAG(tag);
    try {
      body(problem);
    } catch (const rc::detail::CaseResult& result) {
      if (result.type == rc::detail::CaseResult::Type::Failure) last_failure = problem;
      throw;
    } catch (...) {
      last_failure = problem;
      throw;
    }
  };

  rc::detail::TestMetadata metadata;
  metadata.id = id;
  metadata.description = id;
  rc::detail::TestParams test_params;
  test_params.seed = params.seed;
  test_params.maxSuccess = params.max_success;
  test_params.maxSize = params.max_size;
  test_params.disableShrinking = !params.shrink;
  QuietListener listener;
  const auto result = rc::detail::checkTestable(property, metadata, test_params, listener,
                                                rc::detail::configuration().reproduce);

  Outcome outcome;
  outcome.seed = params.seed;
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  outcome.report = report.str();
  if (result.template is<rc::detail::SuccessResult>()) {
    outcome.successes = result.template get<rc::detail::SuccessResult>().numSuccess;
  } else if (result.template is<rc::detail::FailureResult>()) {
    const auto& failure = result.template get<rc::detail::FailureResult>();
    outcome.failed = true;
    outcome.successes = failure.numSuccess;
    outcome.counterexample = last_failure;
    rc::detail::Configuration config;
    config.reproduce[id] = failure.reproduce;
    outcome.reproduce = "RC_PARAMS=\"" + rc::detail::configToMinimalString(config) + "\"";
  } else if (result.template is<rc::detail::GaveUpResult>()) {
    outcome.gave_up = true;
    outcome.successes = result.template get<rc::detail::GaveUpResult>().numSuccess;
  } else {
    outcome.failed = true;  // RapidCheck's own error (the report says which)
  }
  return outcome;
}

std::string describe_outcome(const Kernel& kernel, std::string_view property, const Outcome& outcome) {
  std::ostringstream os;
  os << "[normcheck] " << kernel.name << " / " << property << ": seed=" << outcome.seed
     << " (rerun with NORMCHECK_SEED=" << outcome.seed << " or RC_PARAMS=\"seed=" << outcome.seed << "\")\n";
  os << outcome.report << '\n';
  if (outcome.failed) {
    os << "[normcheck] reproduce: " << outcome.reproduce << '\n';
    if (outcome.counterexample) {
      os << "[normcheck] shrunk counterexample (hex floats):\n";
      showValue(*outcome.counterexample, os);
      if (const char* dir = std::getenv("NORMCHECK_SAVE_CORPUS"); dir && *dir) {
        const auto path = save_counterexample(
            dir, kernel.name, property, kernel.op, *outcome.counterexample,
            {"normcheck corpus: property " + std::string(property) + " failed on " + std::string(kernel.name),
             "seed " + std::to_string(outcome.seed) + ", reproduce: " + outcome.reproduce});
        os << "[normcheck] saved to " << path.string() << '\n';
      }
    }
  }
  std::cout << os.str() << std::flush;
  return os.str();
}

}  // namespace normcheck::props
