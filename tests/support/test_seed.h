// The seed of a randomized test: NORMCHECK_SEED when set, otherwise a fixed
// default, so that CI runs the same cases every time and a failure is a
// change in the code, not a fresh draw. Printed either way; other seeds are
// explored with
//   NORMCHECK_SEED=<seed> ctest -R <test>
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace normcheck::test {

// NORMCHECK_SEED when set, otherwise make_seed(); printed either way.
template <class MakeSeed>
uint64_t seed_from_env_or(const MakeSeed& make_seed) {
  uint64_t seed;
  if (const char* env = std::getenv("NORMCHECK_SEED"); env && *env)
    seed = std::stoull(env);
  else
    seed = make_seed();
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
