// The Highway backward kernels' dgamma and dbeta, bit for bit, against the
// order their rows promise (kernels/simd/bwd_blocks-inl.h): per block of
// kBwdRowsPerBlock rows, each row's term added in row order into a partial
// that starts at zero, then the block partials added in block order. The
// kernels compute several rows together and write each block's first rows
// over whatever the partial held; this checks that neither changes a bit,
// on every Highway target, for 1 and 2 threads, with every optional
// operand present or absent and the outputs holding garbage beforehand.
// The terms are column-wise, so lanes do not matter: in float,
//   LayerNorm  xhat = fl(fl(x - mean) rstd), dgamma term dy xhat, dbeta term dy
//   RMSNorm    xhat = fl(x rrms),            dgamma term dy xhat
// each dy xhat added with one rounding where the target has FMA (AVX2 and
// up: Highway's MulAdd), two below it (SSE4, SSSE3, scalar: MulAdd is a
// product then a sum).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "normcheck/float_format.h"
#include "normcheck/invoke.h"
#include "simd/row_partition.h"
#include "simd_test_support.h"
#include "test_seed.h"
#include "thread_guards.h"

namespace normcheck {
namespace {

class BwdColumnSums : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(BwdColumnSums);

// A backward problem as the kernel sees it (16-bit storage rounded from the
// floats) and as the reference reads it (the stored values, widened).
struct Inputs {
  int64_t rows = 0, cols = 0;
  std::vector<float> x, dy, gamma, mean, stat;  // x, dy: the stored values
  std::vector<uint16_t> x16, dy16;
};

Inputs random_inputs(DType dtype, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  Inputs in;
  in.rows = rows, in.cols = cols;
  const auto stored = [&](float f, std::vector<uint16_t>& bits) {
    if (dtype == DType::f32) return f;
    bits.push_back(to_16(dtype, f));
    return from_16(dtype, bits.back());
  };
  for (int64_t i = 0; i < rows * cols; ++i) {
    in.x.push_back(stored(3 + normal(rng), in.x16));
    in.dy.push_back(stored(normal(rng), in.dy16));
  }
  for (int64_t j = 0; j < cols; ++j) in.gamma.push_back(1 + normal(rng) / 4);
  for (int64_t r = 0; r < rows; ++r) {
    in.mean.push_back(3 + normal(rng) / 16);
    in.stat.push_back(1 + normal(rng) / 16);
  }
  return in;
}

struct ColumnSums {
  std::vector<float> dgamma, dbeta;
};

// Which operands a call passes.
struct Operands {
  bool gamma, dgamma, dbeta;
};

// A value the kernel must overwrite, never add to.
constexpr float kGarbage = 1234.5f;

ColumnSums run(const Kernel& k, const Inputs& in, Operands with) {
  const bool wide = k.dtype == DType::f32;
  const auto n = static_cast<size_t>(in.rows * in.cols), w = static_cast<size_t>(in.cols);
  std::vector<float> dx32(wide ? n : 0);
  std::vector<uint16_t> dx16(wide ? 0 : n);
  ColumnSums out{std::vector<float>(w, kGarbage), std::vector<float>(w, kGarbage)};
  KernelArgs a{.rows = in.rows, .cols = in.cols};
  a.x = wide ? static_cast<const void*>(in.x.data()) : in.x16.data();
  a.dy = wide ? static_cast<const void*>(in.dy.data()) : in.dy16.data();
  a.out = wide ? static_cast<void*>(dx32.data()) : dx16.data();
  a.gamma = with.gamma ? in.gamma.data() : nullptr;
  a.saved_mean = in.mean.data(), a.saved_stat = in.stat.data();
  a.dgamma = with.dgamma ? out.dgamma.data() : nullptr;
  a.dbeta = with.dbeta ? out.dbeta.data() : nullptr;
  invoke(k, a);
  return out;
}

// The product dy xhat rounded on its own (kept out of line so that the
// compiler cannot fuse it with the addition that follows).
[[gnu::noinline]] float rounded_product(float a, float b) { return a * b; }

// The promised sums; with reverse_blocks, the rows of each block in reverse
// order instead (the negative control: a different order, other bits).
ColumnSums block_ordered(Op op, const Inputs& in, bool fma, bool reverse_blocks = false) {
  const int64_t blocks = simd::ceil_div(in.rows, simd::kBwdRowsPerBlock);
  ColumnSums out{std::vector<float>(in.cols), std::vector<float>(in.cols)};
  for (int64_t c = 0; c < in.cols; ++c) {
    float dgamma = 0, dbeta = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * simd::kBwdRowsPerBlock;
      const int64_t end = std::min(in.rows, begin + simd::kBwdRowsPerBlock);
      float pg = 0, pb = 0;
      for (int64_t i = begin; i < end; ++i) {
        const int64_t r = reverse_blocks ? end - 1 - (i - begin) : i;
        const float x = in.x[r * in.cols + c], dy = in.dy[r * in.cols + c];
        const float xhat = op == Op::layernorm_bwd ? (x - in.mean[r]) * in.stat[r] : x * in.stat[r];
        pg = fma ? std::fma(dy, xhat, pg) : pg + rounded_product(dy, xhat);
        pb = pb + dy;
      }
      dgamma = b == 0 ? pg : dgamma + pg;
      dbeta = b == 0 ? pb : dbeta + pb;
    }
    out.dgamma[c] = dgamma;
    out.dbeta[c] = dbeta;
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Highway's MulAdd is one fused operation on x86 from AVX2 up (targets are
// numbered best first), a product and a sum below.
bool target_has_fma(int64_t target) { return target <= HWY_AVX2; }

std::vector<const Kernel*> backward_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel* k : test::simd_kernels())
    if (k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd) out.push_back(k);
  return out;
}

struct Shape {
  int64_t rows, cols;
};
// One block of odd rows with a vector tail; one block plus one row (a last
// group of one row); three blocks, the last short, rows over a chunk; a
// bench shape; a few rows long enough to be split over the pool.
constexpr Shape kShapes[] = {{5, 37}, {33, 100}, {70, 1030}, {64, 768},
                             {3, simd::kSplitMinCols + 5}};

TEST_P(BwdColumnSums, BlockOrderedBitForBit) {
#if !HWY_ARCH_X86
  GTEST_SKIP() << "which targets fuse MulAdd is written down for x86 only";
#endif
  const bool fma = target_has_fma(GetParam());
  test::ThreadCountGuard guard;
  test::EveryCallParallel parallel;
  std::mt19937_64 rng(test::test_seed());
  const Operands kOperands[] = {{true, true, true},   {false, true, true}, {true, true, false},
                                {true, false, true},  {false, false, true}};
  ASSERT_FALSE(backward_kernels().empty());
  for (const Kernel* k : backward_kernels()) {
    const bool layernorm = k->op == Op::layernorm_bwd;
    for (const Shape& s : kShapes) {
      const Inputs in = random_inputs(k->dtype, s.rows, s.cols, rng);
      const ColumnSums want = block_ordered(k->op, in, fma);
      for (const int threads : {1, 2}) {
        simd::set_thread_count(threads);
        for (const Operands& with : kOperands) {
          if (!layernorm && !with.dgamma) continue;  // RMSNorm: no dbeta to check
          const ColumnSums got = run(*k, in, with);
          const std::string where = std::string(k->name) + " on " + target() + ", " +
                                    std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                                    ", " + std::to_string(threads) + " threads, gamma " +
                                    (with.gamma ? "present" : "absent") + ", dbeta " +
                                    (with.dbeta ? "wanted" : "null");
          if (with.dgamma) {
            EXPECT_TRUE(same_bits(got.dgamma, want.dgamma)) << where << ": dgamma";
          } else {
            EXPECT_EQ(got.dgamma[0], kGarbage) << where << ": dgamma written";
          }
          if (layernorm && with.dbeta) {
            EXPECT_TRUE(same_bits(got.dbeta, want.dbeta)) << where << ": dbeta";
          }
        }
      }
    }
  }
}

// Negative control: the same comparison tells the promised order from
// another one (each block's rows reversed) on a problem of three blocks.
TEST_P(BwdColumnSums, ComparisonCatchesAnotherRowOrder) {
#if !HWY_ARCH_X86
  GTEST_SKIP() << "which targets fuse MulAdd is written down for x86 only";
#endif
  const bool fma = target_has_fma(GetParam());
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : backward_kernels()) {
    const Inputs in = random_inputs(k->dtype, 70, 1030, rng);
    const ColumnSums got = run(*k, in, {true, true, k->op == Op::layernorm_bwd});
    ASSERT_TRUE(same_bits(got.dgamma, block_ordered(k->op, in, fma).dgamma)) << k->name;
    EXPECT_FALSE(same_bits(got.dgamma, block_ordered(k->op, in, fma, true).dgamma)) << k->name;
    // And the other rounding of the terms (FMA or not) is told apart too.
    EXPECT_FALSE(same_bits(got.dgamma, block_ordered(k->op, in, !fma).dgamma)) << k->name;
  }
}

}  // namespace
}  // namespace normcheck
