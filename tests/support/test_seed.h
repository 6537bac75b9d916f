// The seed of a randomized test: NORMCHECK_SEED when set, otherwise a fixed
// default, so that CI runs the same cases every time and a failure is a
// change in the code, not a fresh draw. Printed either way; other seeds are
// explored with
//   NORMCHECK_SEED=<seed> ctest -R <test>
// The value is parsed by normcheck::seed_from_env (normcheck/seed.h), the
// parser the command line uses: decimal or 0x hex. A NORMCHECK_SEED that is
// not a seed ends the test process with its message on stderr and exit 2.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "normcheck/seed.h"

namespace normcheck::test {

// NORMCHECK_SEED when set, otherwise make_seed(); printed either way.
template <class MakeSeed>
uint64_t seed_from_env_or(const MakeSeed& make_seed) {
  uint64_t seed;
  try {
    const auto env = normcheck::seed_from_env();
    seed = env ? *env : make_seed();
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << "\n";
    std::exit(2);
  }
  std::cout << "NORMCHECK_SEED=" << seed << "\n";
  return seed;
}

// For a test that replays the same rows on every run unless asked otherwise:
// NORMCHECK_SEED when set, otherwise `fixed`.
inline uint64_t fixed_seed(uint64_t fixed) {
  return seed_from_env_or([fixed] { return fixed; });
}

inline constexpr uint64_t kDefaultTestSeed = 20240601;

inline uint64_t test_seed() { return fixed_seed(kDefaultTestSeed); }

}  // namespace normcheck::test
