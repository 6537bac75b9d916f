// The seed of a randomized reference test: NORMCHECK_SEED when set, otherwise
// a fresh one. Printed either way so that a failure can be replayed with
//   NORMCHECK_SEED=<seed> ctest -R <test>
#pragma once

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
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

inline uint64_t test_seed() {
  return seed_from_env_or(
      [] { return (uint64_t{std::random_device{}()} << 32) | std::random_device{}(); });
}

// For a test that replays the same rows on every run unless asked otherwise:
// NORMCHECK_SEED when set, otherwise `fixed`.
inline uint64_t fixed_seed(uint64_t fixed) {
  return seed_from_env_or([fixed] { return fixed; });
}

}  // namespace normcheck::test
