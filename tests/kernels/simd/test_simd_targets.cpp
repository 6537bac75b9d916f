// Every Highway kernel, on every target this CPU supports (dispatch forced to
// each in turn), against the exact reference and its own a-priori bound:
// row tails of every length class, misaligned arrays, affine or not, shifted
// rows, rows longer than a chunk.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "test_seed.h"
#include "simd/row_partition.h"
#include "simd/target_info.h"
#include "simd_test_support.h"

namespace normcheck {
namespace {

class SimdTargets : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(SimdTargets);

TEST(SimdTargetList, ScalarAndAtLeastOneSimdTarget) {
  EXPECT_GE(hwy::SupportedAndGeneratedTargets().size(), 2u)
      << "a build for x86 has at least the scalar and one SIMD target";
}

TEST_P(SimdTargets, DispatchFollowsTheForcedTarget) {
  EXPECT_STREQ(simd::dispatched_target_name(), target());
}

struct Shape {
  int64_t rows, cols;
};

// Lengths around every vector width (1, 4, 8, 16 lanes and the 4-accumulator
// blocks of 16..64), odd tails, and one row over two chunks.
constexpr Shape kShapes[] = {{3, 1}, {2, 3}, {3, 17}, {2, 64}, {2, 77}, {3, 300}, {2, 1031}};
constexpr Shape kLongRow = {1, 2 * simd::kChunk + 37};

TEST_P(SimdTargets, EveryKernelMeetsItsBoundOnEveryTarget) {
  const uint64_t seed = test::test_seed();
  const auto kernels = test::simd_kernels();
  ASSERT_FALSE(kernels.empty()) << "no Highway kernel in the table";
  {
    const char* target = this->target();
    std::mt19937_64 rng(seed);
    int variant = 0;
    for (const Kernel* k : kernels) {
      for (const Shape& s : kShapes) {
        for (const double center : {0.0, 300.0}) {
          ++variant;
          const bool affine = variant % 2 == 0;
          const int misalign = variant % 4;
          Problem p = test::random_problem(*k, s.rows, s.cols, center, affine, misalign, rng);
          if (k->takes_row_stride) p.row_stride = s.cols + variant % 3;  // 0, 1 or 2 elements of padding
          const Evaluation e = evaluate(*k, p);
          EXPECT_TRUE(e.pass) << target << " " << s.rows << "x" << s.cols << " center " << center
                              << " affine " << affine << " misalign " << misalign
                              << " row stride " << p.row_stride << ": "
                              << test::describe(e);
        }
      }
    }
  }
}

// Rows over two chunks: the chunked sums and their merge, on every target.
TEST_P(SimdTargets, LongRowsMeetTheBoundOnEveryTarget) {
  const uint64_t seed = test::test_seed();
  {
    const char* target = this->target();
    std::mt19937_64 rng(seed);
    for (const Kernel* k : test::simd_kernels()) {
      const Problem p = test::random_problem(*k, kLongRow.rows, kLongRow.cols, 10.0, true, 1, rng);
      const Evaluation e = evaluate(*k, p);
      EXPECT_TRUE(e.pass) << target << " long row: " << test::describe(e);
    }
  }
}

// The rows the fast kernels treat specially, on every target: constant rows
// (eps 0: NaN; eps > 0: y = beta), d = 1, NaN and inf, rows whose float
// statistics overflow (1e30) or underflow (1e-30 with eps 0), which go to the
// float64 row, and rows whose 1/rms is not a normal float (beyond 2^127 or
// below 2^-126), on which the 16-bit RMSNorm forward leaves float32 math.
// Every Highway kernel must meet its bound and the NaN semantics on the rows
// inside its input range (evaluate() declines the others: nothing runs).
TEST_P(SimdTargets, SpecialRowsOnEveryTarget) {
  struct Row {
    const char* what;
    std::vector<float> x;
    float eps;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Row> rows = {
      {"constant, eps 0", std::vector<float>(37, 0.1f), 0.0f},
      {"constant, eps 1e-5", std::vector<float>(1031, -3.7f), 1e-5f},
      {"zeros, eps 0", std::vector<float>(20, 0.0f), 0.0f},
      {"d = 1", {42.0f}, 1e-5f},
      {"NaN", {1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 5}, 1e-5f},
      {"+inf", {1, 2, inf, 4, 5, 6, 7, 8, 9}, 1e-5f},
      {"+inf and -inf", {inf, -inf, 3}, 1e-5f},
      {"squares overflow", {1e30f, -2e30f, 3e30f, 5e29f, -1e30f}, 1e-5f},
      {"squares underflow, eps 0", {1e-30f, -2e-30f, 3e-30f, 5e-31f, -1e-30f}, 0.0f},
      {"1/rms above 2^127, eps 0", {1e-39f, -2e-39f, 3e-39f, 5e-40f, -1e-39f}, 0.0f},
      {"1/rms below 2^-126", {3e38f, -2e38f, 1e38f, 2.5e38f}, 1e-5f},
  };
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  {
    const char* target = this->target();
    for (const Kernel* k : test::simd_kernels()) {
      for (const Row& row : rows) {
        Problem p;
        p.rows = 1;
        p.cols = static_cast<int64_t>(row.x.size());
        p.x = row.x;
        p.eps = row.eps;
        if (k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd) {
          for (size_t i = 0; i < row.x.size(); ++i) p.dy.push_back(static_cast<float>(normal(rng)));
        }
        if (k->op == Op::layernorm_fwd) {
          for (size_t i = 0; i < row.x.size(); ++i) p.beta.push_back(static_cast<float>(normal(rng)));
        }
        const Evaluation e = evaluate(*k, test::with_zero_residual(*k, p));
        EXPECT_TRUE(e.pass) << target << " " << row.what << ": " << test::describe(e);
      }
    }
  }
}

// NaNs whose payload the bf16 rounding increment would carry through the
// exponent into the sign (0x7FFFFFFF, 0xFFFFFFFF, 0x7FFF8000) or that lose
// their quiet bit (0x7F800001) give NaN outputs, on every target: the rows
// round bf16 without the NaN select only where no input NaN can reach the
// output (hwy_io-inl.h, Values). Forward: in gamma and beta, so those
// columns' y are NaN. Backward: in dy or x of one row, so that row's dx is
// NaN, and in gamma, so every row's is. (A NaN read from 16-bit storage has
// no payload below its top 16 bits, which no rounding increment carries out;
// gamma and beta, float32, can.) 67 columns: pairs of vectors and a tail on
// every target.
TEST_P(SimdTargets, NaNPayloadsGiveNaNOnEveryTarget) {
  constexpr int64_t d = 67;
  const uint32_t payloads[] = {0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FFF8000u, 0x7F800001u};
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  Problem p;
  p.rows = 4;
  p.cols = d;
  for (int64_t i = 0; i < p.rows * d; ++i) p.x.push_back(static_cast<float>(normal(rng)));
  p.gamma.assign(d, 1.5f);
  p.eps = 1e-5f;
  {
    const char* target = this->target();
    for (const Kernel* k : test::simd_kernels()) {
      std::vector<Problem> problems(1, p);
      if (k->op == Op::layernorm_fwd || k->op == Op::rmsnorm_fwd) {
        Problem& q = problems[0];
        for (size_t j = 0; j < 4; ++j) q.gamma[17 * j] = std::bit_cast<float>(payloads[j]);
        if (k->op == Op::layernorm_fwd) {
          q.beta.assign(d, 0.25f);
          q.beta[5] = std::bit_cast<float>(payloads[0]);
        }
      } else {
        for (int64_t i = 0; i < p.rows * d; ++i) {
          problems[0].dy.push_back(static_cast<float>(normal(rng)));
        }
        problems.push_back(problems[0]);
        Problem& rows_with_nan = problems[0];
        rows_with_nan.dy[3] = std::bit_cast<float>(payloads[0]);           // row 0
        rows_with_nan.x[d + 40] = std::bit_cast<float>(payloads[1]);       // row 1
        rows_with_nan.dy[2 * d + 66] = std::bit_cast<float>(payloads[2]);  // row 2
        problems[1].gamma[20] = std::bit_cast<float>(payloads[0]);
      }
      for (const Problem& q : problems) {
        const Evaluation e = evaluate(*k, test::with_zero_residual(*k, q));
        EXPECT_TRUE(e.pass) << target << " " << k->name << ": " << test::describe(e);
      }
    }
  }
}

// f16 ends at 65504 (values from 65520 on round to inf): outputs beyond it
// must be the infinity of their sign, the others still within the bound, on
// every target. x = -1, 1, -1, ... has mean 0 and sigma 1, and mean(x^2) = 1
// (eps 0), so xhat = x exactly for LayerNorm and RMSNorm; with gamma 1e5 on
// the first half of the columns, y = gamma x is +-1e5 there. Backward, dy = 1
// at column 0 only (gamma 1e5 everywhere): LayerNorm dx_0 = 1e5 (1 - 2/d) =
// 75000 for d = 8, the other columns -25000 (xhat -1) or 0; RMSNorm dx_0 =
// 1e5 (1 - 1/d) = 87500, the others 1e5 x_j / d = +-12500.
TEST_P(SimdTargets, F16OutputsBeyondItsRangeAreInfOnEveryTarget) {
  constexpr int64_t d = 8;
  Problem p;
  p.rows = 1;
  p.cols = d;
  for (int64_t j = 0; j < d; ++j) {
    p.x.push_back(j % 2 ? 1.0f : -1.0f);
    p.gamma.push_back(j < d / 2 ? 1e5f : 1.0f);
  }
  p.eps = 0;
  std::set<std::string_view> f16_kernels;
  {
    const char* target = this->target();
    for (const Kernel* k : test::simd_kernels()) {
      if (k->dtype != DType::f16) continue;
      f16_kernels.insert(k->name);
      Problem q = p;
      if (k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd) {
        q.dy.assign(d, 0.0f);
        q.dy[0] = 1;
        q.gamma.assign(d, 1e5f);
      }
      const Evaluation e = evaluate(*k, test::with_zero_residual(*k, q));
      EXPECT_TRUE(e.pass) << target << " " << k->name << ": " << test::describe(e);
    }
  }
  EXPECT_GE(f16_kernels.size(), 4u) << "the f16 LayerNorm and RMSNorm rows, forward and backward";
}

// A 16-bit row runs its float32 row's algorithm (Kernel::float32_counterpart),
// so that row's input range (kernel.h InputRange: where its bound holds) binds
// wherever the format reaches: bf16 has float's exponent range, so the same
// limit; every f16 value (|x| <= 65504) must lie inside the float32 limit,
// or the f16 row needs one too.
TEST(SimdRows, SixteenBitRowsDeclareTheirFloat32RowsRange) {
  int rows = 0;
  for (const Kernel* k : test::simd_kernels()) {
    if (k->dtype == DType::f32) continue;
    ++rows;
    const std::string_view f32_name = k->float32_counterpart;
    ASSERT_FALSE(f32_name.empty()) << k->name << ": a 16-bit Highway row names its float32 row";
    const Kernel* f32 = find_kernel(f32_name);
    ASSERT_NE(f32, nullptr) << k->name << ": no row " << f32_name;
    ASSERT_EQ(f32->dtype, DType::f32) << f32_name;
    ASSERT_EQ(f32->op, k->op) << f32_name;
    ASSERT_FALSE(f32->range.sqrt_d_scaled) << f32_name << ": compare per d then";
    if (k->dtype == DType::bf16) {
      EXPECT_EQ(k->range.max_abs_x, f32->range.max_abs_x) << k->name;
    } else {
      EXPECT_GE(f32->range.max_abs_x, 65504.0) << k->name;
    }
  }
  EXPECT_GE(rows, 8) << "LayerNorm and RMSNorm, forward and backward, bf16 and f16";
}

}  // namespace
}  // namespace normcheck
