// Every Highway kernel, on every target this CPU supports (dispatch forced to
// each in turn), against the exact reference and its own a-priori bound:
// row tails of every length class, misaligned arrays, affine or not, shifted
// rows, rows longer than a chunk.
#include <gtest/gtest.h>

#include <random>

#include "../reference/test_seed.h"
#include "simd/row_partition.h"
#include "simd/target_info.h"
#include "simd_test_support.h"

namespace normcheck {
namespace {

TEST(SimdTargets, DispatchFollowsTheForcedTarget) {
  int targets = 0;
  test::for_each_target([&](const char* target) {
    ++targets;
    EXPECT_STREQ(simd::dispatched_target_name(), target);
  });
  EXPECT_GE(targets, 2) << "a build for x86 has at least the scalar and one SIMD target";
}

struct Shape {
  int64_t rows, cols;
};

// Lengths around every vector width (1, 4, 8, 16 lanes and the 4-accumulator
// blocks of 16..64), odd tails, and one row over two chunks.
constexpr Shape kShapes[] = {{3, 1}, {2, 3}, {3, 17}, {2, 64}, {2, 77}, {3, 300}, {2, 1031}};
constexpr Shape kLongRow = {1, 2 * simd::kChunk + 37};

TEST(SimdTargets, EveryKernelMeetsItsBoundOnEveryTarget) {
  const uint64_t seed = test::test_seed();
  const auto kernels = test::simd_kernels();
  ASSERT_GE(kernels.size(), 7u);  // LN fwd (f32, bf16, accurate), LN bwd (f32, bf16), RMS fwd, bwd
  test::for_each_target([&](const char* target) {
    std::mt19937_64 rng(seed);
    int variant = 0;
    for (const Kernel* k : kernels) {
      for (const Shape& s : kShapes) {
        for (const double center : {0.0, 300.0}) {
          ++variant;
          const bool affine = variant % 2 == 0;
          const int misalign = variant % 4;
          const Problem p = test::random_problem(*k, s.rows, s.cols, center, affine, misalign, rng);
          const Evaluation e = evaluate(*k, p);
          EXPECT_TRUE(e.pass) << target << " " << s.rows << "x" << s.cols << " center " << center
                              << " affine " << affine << " misalign " << misalign << ": "
                              << test::describe(e);
        }
      }
    }
  });
}

// Rows over two chunks: the chunked sums and their merge, on every target.
TEST(SimdTargets, LongRowsMeetTheBoundOnEveryTarget) {
  const uint64_t seed = test::test_seed();
  test::for_each_target([&](const char* target) {
    std::mt19937_64 rng(seed);
    for (const Kernel* k : test::simd_kernels()) {
      const Problem p = test::random_problem(*k, kLongRow.rows, kLongRow.cols, 10.0, true, 1, rng);
      const Evaluation e = evaluate(*k, p);
      EXPECT_TRUE(e.pass) << target << " long row: " << test::describe(e);
    }
  });
}

}  // namespace
}  // namespace normcheck
