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

inline uint64_t test_seed() {
  uint64_t seed;
  if (const char* env = std::getenv("NORMCHECK_SEED"); env && *env)
    seed = std::stoull(env);
  else
    seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  std::cout << "NORMCHECK_SEED=" << seed << "\n";
  return seed;
}

}  // namespace normcheck::test
