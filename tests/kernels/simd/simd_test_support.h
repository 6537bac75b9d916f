// Helpers of the SIMD kernel tests: the table rows this area owns, one gtest
// per Highway target the CPU supports, random problems.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "describe_evaluation.h"
#include "kernel_test_rows.h"
#include "hwy/targets.h"
#include "hwy/tests/hwy_gtest.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"

namespace normcheck::test {

// Our rows of the kernel table written with Highway (Kernel::family).
inline std::vector<const Kernel*> simd_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::ours && k.family == Family::highway) out.push_back(&k);
  return out;
}

// The Highway rows with a spec of their own for which has(spec) holds (a
// residual add, a quantized y).
template <class Pred>
std::vector<const Kernel*> simd_spec_kernels(Pred has) {
  std::vector<const Kernel*> out;
  for (const Kernel* k : simd_kernels())
    if (k->spec && has(*k->spec)) out.push_back(k);
  return out;
}

// The table's row `name` states the spec whose text form is `text`: a valid
// spec of the row's op, with x in the row's dtype, on rows at a stride.
inline void expect_row_states_spec(std::string_view name, std::string_view text) {
  const Kernel* k = find_kernel(name);
  ASSERT_NE(k, nullptr) << name;
  ASSERT_NE(k->spec, nullptr) << name;
  const SpecParse parsed = parse_spec(text);
  ASSERT_TRUE(parsed.spec) << text << ": " << parsed.error;
  EXPECT_EQ(*parsed.spec, *k->spec) << name << " states " << to_text(*k->spec) << ", not " << text;
  EXPECT_EQ(spec_error(*k->spec), "") << name;
  EXPECT_EQ(k->op, op_of(*k->spec)) << name;
  EXPECT_EQ(k->dtype, k->spec->dtype_of(TensorName::x)) << name;
  EXPECT_TRUE(k->takes_row_stride) << name;
}

// One gtest per Highway target, as hwy/tests/hwy_gtest.h does it: a suite
// derived from PerTarget and instantiated with
// HWY_TARGET_INSTANTIATE_TEST_SUITE_P(Suite) runs each TEST_P(Suite, ...) once
// for every target this CPU supports and the kernels were built for (named
// .../AVX2, .../SSE4, ...), with the kernels' dynamic dispatch forced to it;
// TearDown restores the normal dispatch, even after a failed ASSERT.
class PerTarget : public hwy::TestWithParamTarget {
 protected:
  void SetUp() override {
    hwy::TestWithParamTarget::SetUp();
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  void TearDown() override {
    hwy::TestWithParamTarget::TearDown();
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  }
  const char* target() const { return hwy::TargetName(GetParam()); }
};

// x = center + N(0,1) (and dy ~ N(0,1) for the backward ops, residual ~
// N(0,1) for a spec that adds one); with `affine`, gamma = 1 + N(0,1)/2 and
// beta ~ N(0,1) (RMSNorm has no beta); for a spec that quantizes y by a
// static scale, the scale 4 / qmax (|y| reaches about 4 on these rows, so the
// largest t pass qmax and saturate). with_zero_residual: kernel_test_rows.h.
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
  if (spec_of(k).add) {
    for (size_t i = 0; i < n; ++i) p.residual.push_back(static_cast<float>(normal(rng)));
  }
  if (const auto& q = spec_of(k).quant; q && !q->dynamic())
    p.scale = static_cast<float>(4 / quant_max(q->cast.format));
  if (affine) {
    for (int64_t j = 0; j < cols; ++j) p.gamma.push_back(static_cast<float>(1 + normal(rng) / 2));
    if (k.op == Op::layernorm_fwd) {
      for (int64_t j = 0; j < cols; ++j) p.beta.push_back(static_cast<float>(normal(rng)));
    }
  }
  return p;
}

}  // namespace normcheck::test
