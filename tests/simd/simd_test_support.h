// Helpers of the SIMD kernel tests: the table rows this area owns, forcing the
// Highway dispatch to each target the CPU supports, random problems.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "../support/describe_evaluation.h"
#include "hwy/targets.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::test {

// Rows of the kernel table written with Highway: names "<op>.hwy...",
// and layernorm_fwd.accurate.
inline std::vector<const Kernel*> simd_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table()) {
    const std::string_view variant = k.name.substr(k.name.find('.') + 1);
    if (k.origin == Origin::ours && (variant.starts_with("hwy") || variant == "accurate"))
      out.push_back(&k);
  }
  return out;
}

// Runs body(target name) once for every Highway target this CPU supports and
// the kernels were built for, with the dynamic dispatch forced to it; the
// normal dispatch is restored afterwards, even when body fails an ASSERT.
inline void for_each_target(const std::function<void(const char* target)>& body) {
  struct Restore {
    ~Restore() {
      hwy::SetSupportedTargetsForTest(0);
      hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    }
  } restore;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    body(hwy::TargetName(target));
  }
}

// x = center + N(0,1) (and dy ~ N(0,1) for the backward ops); with `affine`,
// gamma = 1 + N(0,1)/2 and beta ~ N(0,1) (RMSNorm has no beta).
inline Problem random_problem(const Kernel& k, int64_t rows, int64_t cols, double center,
                              bool affine, int misalign, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.misalign_floats = misalign;
  const auto n = static_cast<size_t>(rows * cols);
  for (size_t i = 0; i < n; ++i) p.x.push_back(static_cast<float>(center + normal(rng)));
  const bool backward = k.op == Op::layernorm_bwd || k.op == Op::rmsnorm_bwd;
  if (backward) {
    for (size_t i = 0; i < n; ++i) p.dy.push_back(static_cast<float>(normal(rng)));
  }
  if (affine) {
    for (int64_t j = 0; j < cols; ++j) p.gamma.push_back(static_cast<float>(1 + normal(rng) / 2));
    if (k.op == Op::layernorm_fwd) {
      for (int64_t j = 0; j < cols; ++j) p.beta.push_back(static_cast<float>(normal(rng)));
    }
  }
  return p;
}

}  // namespace normcheck::test
