// `normcheck claims`: runs the claim checks (claim_table(): statements about LayerNorm from
// blog posts and papers practitioners rely on)
// and prints id, verdict, the figure that decides it, and the source.
//
// Exit codes: a REFUTED verdict is a finding about a seed's math, which is what
// the check exists to report, so it does not fail the run. The run fails (1)
// when a selected claim could not be decided: UNCHECKED, or its check threw.
// Bad usage (unknown --only id, bad --seed) is 2.
#include <cstdlib>
#include <exception>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claim_json.h"
#include "command.h"
#include "normcheck/claims.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

struct ClaimsArgs {
  bool json = false, full = false, explain = false;
  std::vector<std::string> only;
  std::string seed;  // text, so a bad value gets our message and exit 2
};

std::vector<const Claim*> select_claims(const std::vector<std::string>& only) {
  const auto table = claim_table();
  std::vector<const Claim*> selected;
  for (const std::string& id : only) {
    if (!find_claim(id)) {
      std::string known;
      for (const Claim& c : table) known += (known.empty() ? "" : ", ") + std::string(c.id);
      throw UsageError("unknown claim id '" + id + "' (known: " + known + ")");
    }
  }
  for (const Claim& c : table) {
    bool wanted = only.empty();
    for (const std::string& id : only) wanted = wanted || c.id == id;
    if (wanted) selected.push_back(&c);
  }
  return selected;
}

ClaimResult run_one(const Claim& claim, const ClaimOptions& options) {
  try {
    return claim.check(options);
  } catch (const std::exception& e) {
    ClaimResult failed;
    failed.figure = std::string("check failed: ") + e.what();
    return failed;
  }
}

int run_claims(const ClaimsArgs& args) {
  ClaimOptions options;
  options.seed = seed_from(args.seed, ClaimOptions{}.seed);
  options.full = args.full;
  const auto selected = select_claims(args.only);

  nlohmann::json claims = nlohmann::json::array();
  bool undecided = false;
  if (!args.json)
    std::cout << "claims: seed " << options.seed << " (--seed or NORMCHECK_SEED), "
              << (options.full ? "full" : "fast") << " sweeps\n";
  for (const Claim* claim : selected) {
    const ClaimResult r = run_one(*claim, options);
    undecided = undecided || r.verdict == Verdict::unchecked;
    if (args.json) {
      nlohmann::json entry = claim_json(*claim, r);
      entry["seed"] = options.seed;
      claims.push_back(entry);
    } else {
      std::cout << claim->id << "  " << to_string(r.verdict) << "  " << r.figure << "  [" << claim->source << "]\n";
      if (args.explain) std::cout << "    " << claim->title << "\n    " << r.explanation << "\n";
      std::cout.flush();
    }
  }
  if (args.json) {
    const nlohmann::json doc = {{"seed", options.seed}, {"full", options.full}, {"claims", claims}};
    std::cout << doc.dump(2) << "\n";
  }
  return undecided ? kExitFinding : kExitOk;
}

}  // namespace

void add_claims_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ClaimsArgs>();
  CLI::App* sub = app.add_subcommand(
      "claims",
      "Check the math that LayerNorm blog posts and papers state: per claim its id, verdict (HOLDS, "
      "HOLDS_APPROXIMATELY, REFUTED, UNCHECKED), the figure that decides it and its source.\n"
      "Exit 0 when every selected claim got a verdict (a REFUTED claim is a finding about the seed, "
      "reported, not a failure); 1 when a claim could not be decided (UNCHECKED or its check failed); "
      "2 on bad usage such as an unknown --only id.");
  sub->add_flag("--json", args->json, "Print one JSON document: {seed, full, claims: [{id, verdict, figure, source, "
                                      "title, explanation, seed, series}]}");
  sub->add_option("--only", args->only, "Run only this claim id (repeatable), e.g. --only S1 --only J7");
  sub->add_option("--seed", args->seed, "Seed of every random check (default: NORMCHECK_SEED, else 20261121)");
  sub->add_flag("--full", args->full, "Run the full (nightly) sweeps instead of the fast subset");
  sub->add_flag("--explain", args->explain, "Also print each claim's title and explanation (text output)");
  sub->callback([&action, args] { action = [args] { return run_claims(*args); }; });
}

}  // namespace normcheck::cli
