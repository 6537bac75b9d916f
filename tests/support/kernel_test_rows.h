// Rows and helpers shared by the kernel tests of tests/kernels (LayerNorm
// forward and backward, RMSNorm).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_seed.h"
#include "describe_evaluation.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck::test {

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

// Appends n values mean + spread * N(0, 1). One `normal` serves a whole
// problem: the distribution keeps the second value of each pair it draws.
inline void append_normal(std::vector<float>& out, int64_t n, float mean, float spread,
                          std::normal_distribution<float>& normal, std::mt19937_64& rng) {
  for (int64_t i = 0; i < n; ++i) out.push_back(mean + spread * normal(rng));
}

// rows x cols of x = offset + spread * N(0, 1), drawn from `normal`.
inline Problem normal_rows(std::normal_distribution<float>& normal, std::mt19937_64& rng,
                           int64_t rows, int64_t cols, float offset, float spread, float eps) {
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.eps = eps;
  append_normal(p.x, rows * cols, offset, spread, normal, rng);
  return p;
}

// rows x cols of offset + spread * N(0, 1).
inline Problem shifted_normal_rows(std::mt19937_64& rng, int64_t rows, int64_t cols, float offset,
                                   float spread, float eps) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  return normal_rows(normal, rng, rows, cols, offset, spread, eps);
}

// A problem for either op of a norm: x = offset + spread N(0, 1), dy = dy_mean +
// dy_spread N(0, 1) (a forward kernel ignores it), gamma = N(1, 0.5) when wanted.
inline Problem random_problem(std::mt19937_64& rng, int64_t rows, int64_t cols, bool with_gamma,
                              float offset, float spread, float eps, float dy_mean = 0.0f,
                              float dy_spread = 1.0f) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p = normal_rows(normal, rng, rows, cols, offset, spread, eps);
  append_normal(p.dy, rows * cols, dy_mean, dy_spread, normal, rng);
  if (with_gamma) append_normal(p.gamma, cols, 1.0f, 0.5f, normal, rng);
  return p;
}

// A kernel whose spec adds a residual gets a residual of zeros where it has
// none: its norm's input x + 0 is x itself, so a row built to be special (NaN,
// overflow, a constant row) stays so.
inline Problem with_zero_residual(const Kernel& k, Problem p) {
  if (spec_of(k).add && p.residual.empty()) p.residual.assign(p.x.size(), 0.0f);
  return p;
}

// The kernel must run the problem (with a zero residual if it adds one) and
// meet its bound.
inline void expect_within_bound(const Kernel& k, const Problem& p, const std::string& what) {
  const Evaluation ev = evaluate(k, with_zero_residual(k, p));
  EXPECT_TRUE(ev.declined.empty()) << k.name << " declined " << what << ": " << ev.declined;
  EXPECT_TRUE(ev.pass) << k.name << " on " << what << ": " << describe(ev);
}

inline void expect_pass(const Kernel& k, const Problem& p, const std::string& what) {
  const Evaluation ev = evaluate(k, with_zero_residual(k, p));
  if (!ev.declined.empty()) return;  // a kernel may decline a shape; nothing ran
  EXPECT_TRUE(ev.pass) << what << ": " << describe(ev);
}

}  // namespace normcheck::test
