// The fused residual add + norm forward kernels (kernels/simd/fused_add_*):
// each row states the policy its comment names, and on every Highway target
// its outputs (y, residual_out, mean, rstd / rrms) lie in the range that
// policy admits (evaluate(): spec_policy.h), on rows at a stride (the
// padding between rows is NaN, so a lane read past a row's end reaches y),
// misaligned, with tails of every length class, a residual that cancels x
// (the stored sum and the float32 sum then differ most, relative to s) and
// rows up to d = 65536.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/op_spec.h"
#include "simd/hwy_bounds.h"
#include "simd/row_partition.h"
#include "simd_test_support.h"
#include "test_seed.h"

namespace normcheck {
namespace {

// The fused rows of the table: Highway rows whose spec adds a residual.
std::vector<const Kernel*> fused_kernels() {
  return test::simd_spec_kernels([](const OpSpec& spec) { return spec.add; });
}

// Each row's spec: the norm reads the sum it stores (round=sum:T), weight
// gamma or 1 + gamma, gamma and beta float32.
TEST(FusedAddRows, EachRowStatesItsPolicy) {
  const std::pair<std::string_view, std::string_view> rows[] = {
      {"rmsnorm_fwd.hwy_add", "rmsnorm fwd add round=sum:f32"},
      {"rmsnorm_fwd.hwy_add_bf16", "rmsnorm fwd dtype=bf16 add round=sum:bf16"},
      {"rmsnorm_fwd.hwy_add_f16", "rmsnorm fwd dtype=f16 add round=sum:f16"},
      {"rmsnorm_fwd.hwy_add_1pg", "rmsnorm fwd add weight=1+gamma round=sum:f32"},
      {"rmsnorm_fwd.hwy_add_1pg_bf16", "rmsnorm fwd dtype=bf16 add weight=1+gamma round=sum:bf16"},
      {"rmsnorm_fwd.hwy_add_1pg_f16", "rmsnorm fwd dtype=f16 add weight=1+gamma round=sum:f16"},
      {"layernorm_fwd.hwy_add", "layernorm fwd add round=sum:f32"},
      {"layernorm_fwd.hwy_add_bf16", "layernorm fwd dtype=bf16 add round=sum:bf16"},
      {"layernorm_fwd.hwy_add_f16", "layernorm fwd dtype=f16 add round=sum:f16"},
      {"layernorm_fwd.hwy_add_1pg", "layernorm fwd add weight=1+gamma round=sum:f32"},
      {"layernorm_fwd.hwy_add_1pg_bf16", "layernorm fwd dtype=bf16 add weight=1+gamma round=sum:bf16"},
      {"layernorm_fwd.hwy_add_1pg_f16", "layernorm fwd dtype=f16 add weight=1+gamma round=sum:f16"},
  };
  for (const auto& [name, text] : rows) test::expect_row_states_spec(name, text);
  EXPECT_EQ(fused_kernels().size(), std::size(rows)) << "a fused Highway row this test does not name";
}

class FusedAdd : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(FusedAdd);

// A problem for fused kernel k: x = center + N(0,1), the residual N(0,1) or
// -x + N(0,1) 2^-8 (cancelling: |s| ~ 2^-8 against |x| ~ center), gamma
// 1 + N(0,1)/2 (for weight=1+gamma: N(0,1)/2, a weight near 1), beta N(0,1).
Problem fused_problem(const Kernel& k, int64_t rows, int64_t cols, int64_t stride, double center,
                      bool cancel, int misalign, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Problem p = test::random_problem(k, rows, cols, center, /*affine=*/true, misalign, rng);
  p.row_stride = stride;
  for (size_t i = 0; i < p.residual.size(); ++i)
    if (cancel) p.residual[i] = static_cast<float>(-p.x[i] + normal(rng) * 0x1p-8);
  if (k.spec->weight == Weight::one_plus_gamma)
    for (float& g : p.gamma) g -= 1;
  return p;
}

// Lengths around every vector width and the 4-accumulator blocks, odd tails,
// one row over two chunks; strides none, one element, an odd seven.
TEST_P(FusedAdd, OutputsWithinThePolicysRangeOnEveryTarget) {
  std::mt19937_64 rng(test::test_seed());
  const int64_t lengths[] = {1, 3, 17, 64, 77, 300, 1031, 2 * simd::kChunk + 37};
  int variant = 0;
  for (const Kernel* k : fused_kernels()) {
    for (const int64_t cols : lengths) {
      for (const int64_t pad : {0, 1, 7}) {
        for (const bool cancel : {false, true}) {
          ++variant;
          const double center = variant % 3 == 0 ? 300.0 : 0.0;
          const int64_t rows = cols > 1000 ? 2 : 3;
          const Problem p = fused_problem(*k, rows, cols, pad ? cols + pad : 0, center, cancel, variant % 4, rng);
          const Evaluation e = evaluate(*k, p);
          EXPECT_TRUE(e.pass) << target() << " " << rows << "x" << cols << " stride " << p.row_stride << " center "
                              << center << " cancel " << cancel << " misalign " << p.misalign_floats << ": "
                              << test::describe(e);
        }
      }
    }
  }
}

// d = 65536, the largest d the generators draw, two rows at a stride: split
// into chunks (row_partition.h) and, with two threads or more, the chunks
// spread over the pool.
TEST(FusedAddLongRows, OutputsWithinThePolicysRangeAtD65536) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : fused_kernels()) {
    const Problem p = fused_problem(*k, 2, 65536, 65536 + 3, 10.0, false, 1, rng);
    const Evaluation e = evaluate(*k, p);
    EXPECT_TRUE(e.pass) << "2x65536 stride 65539: " << test::describe(e);
  }
}

}  // namespace
}  // namespace normcheck
