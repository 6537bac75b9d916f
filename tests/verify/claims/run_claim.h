// Running one claim of claim_table() in a test: the seed is NORMCHECK_SEED
// (printed) or the claims' default, and an id missing from the table fails
// the test.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "normcheck/claims.h"
#include "test_seed.h"

namespace normcheck::test {

inline ClaimOptions claim_options_from_env(bool full = false) {
  ClaimOptions options;
  options.full = full;
  options.seed = fixed_seed(options.seed);
  return options;
}

inline ClaimResult run_claim(std::string_view id, const ClaimOptions& options) {
  const Claim* claim = find_claim(id);
  if (!claim) {
    ADD_FAILURE() << id << " is not in the claim table";
    return {};
  }
  return claim->check(options);
}

}  // namespace normcheck::test
