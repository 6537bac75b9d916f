// Rows and helpers shared by the LayerNorm forward kernel tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::test {

// The seed of a randomized test: NORMCHECK_SEED when set, else `fixed`;
// printed so that a failure replays with NORMCHECK_SEED=<seed> ctest -R <test>.
inline uint64_t fixed_seed(uint64_t fixed) {
  uint64_t seed = fixed;
  if (const char* env = std::getenv("NORMCHECK_SEED"); env && *env) seed = std::stoull(env);
  std::cout << "NORMCHECK_SEED=" << seed << "\n";
  return seed;
}

// Every LayerNorm forward kernel of the table that normcheck vouches for
// (Origin::ours: scalar, SIMD, threaded). Controls fail by design; whether a
// third-party adapter meets the bound it declares is a finding that
// `normcheck check` reports, not an invariant of this code base (the shifted
// test prints them).
inline std::vector<const Kernel*> forward_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.op == Op::layernorm_fwd && k.origin == Origin::ours) out.push_back(&k);
  return out;
}

// The third-party forward adapters, printed for the record.
inline std::vector<const Kernel*> third_party_forward_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.op == Op::layernorm_fwd && k.origin == Origin::third_party) out.push_back(&k);
  return out;
}

// rows x cols of offset + spread * N(0, 1).
inline Problem shifted_normal_rows(std::mt19937_64& rng, int64_t rows, int64_t cols, float offset,
                                   float spread, float eps) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.eps = eps;
  for (int64_t i = 0; i < rows * cols; ++i) p.x.push_back(offset + spread * normal(rng));
  return p;
}

inline std::string describe(const Evaluation& ev) {
  std::string s = ev.kernel + ": error/bound " + std::to_string(ev.max_error_over_bound) +
                  ", max ulp " + std::to_string(ev.max_ulp) + ", worst " + ev.worst.output + "[" +
                  std::to_string(ev.worst.row) + "," + std::to_string(ev.worst.col) +
                  "] computed " + std::to_string(ev.worst.computed) + " exact " +
                  std::to_string(ev.worst.exact) + " allowed " + std::to_string(ev.worst.allowed);
  if (ev.nonfinite_mismatch) s += " (NaN/inf mismatch)";
  if (ev.out_of_bounds_write) s += " (out-of-bounds write)";
  if (ev.unwritten_output) s += " (unwritten output)";
  if (ev.wrote_input) s += " (wrote input)";
  if (!ev.declined.empty()) s += " (declined: " + ev.declined + ")";
  return s;
}

inline void expect_pass(const Kernel& k, const Problem& p, const std::string& what) {
  const Evaluation ev = evaluate(k, p);
  if (!ev.declined.empty()) return;  // a kernel may decline a shape; nothing ran
  EXPECT_TRUE(ev.pass) << what << ": " << describe(ev);
}

}  // namespace normcheck::test
