// reference_layernorm_fwd_statistics and reference_rmsnorm_fwd_statistics
// (what evaluate() gives a backward kernel as its saved statistics): the same
// mean, rstd / rrms and row stats as the full forward reference without
// affine, bit for bit, and no elements. Rows: normal ones, a constant row, a
// NaN row and a row of subnormals, so that both the fast phase and the MPFR
// path produce statistics.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "normcheck/reference.h"
#include "test_seed.h"

namespace normcheck {
namespace {

void expect_same(const ExactValues& a, const ExactValues& b, const char* what) {
  ASSERT_EQ(a.exact.size(), b.exact.size()) << what;
  for (std::size_t i = 0; i < a.exact.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(a.exact[i]), std::bit_cast<uint64_t>(b.exact[i])) << what << "[" << i << "]";
    EXPECT_EQ(std::bit_cast<uint32_t>(a.rounded[i]), std::bit_cast<uint32_t>(b.rounded[i])) << what << "[" << i << "]";
  }
}

void expect_same(const std::vector<RowStats>& a, const std::vector<RowStats>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(a[i].mean), std::bit_cast<uint64_t>(b[i].mean)) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(a[i].variance), std::bit_cast<uint64_t>(b[i].variance)) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(a[i].r), std::bit_cast<uint64_t>(b[i].r)) << i;
    EXPECT_EQ(a[i].finite, b[i].finite) << i;
  }
}

TEST(ReferenceStatistics, TheForwardsStatisticsWithoutElements) {
  constexpr int64_t kRows = 12, kCols = 33;
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> x(kRows * kCols);
  for (float& v : x) v = normal(rng);
  for (int64_t j = 0; j < kCols; ++j) {
    x[1 * kCols + j] = 2.5f;                                     // constant
    x[2 * kCols + j] = 0x1p-140f * normal(rng);                  // subnormal
  }
  x[3 * kCols + 5] = std::numeric_limits<float>::quiet_NaN();  // NaN
  for (float eps : {0.0f, 1e-5f}) {
    const LayerNormFwdReference full = reference_layernorm_fwd(x, {}, {}, kRows, kCols, eps);
    const LayerNormFwdReference stats = reference_layernorm_fwd_statistics(x, kRows, kCols, eps);
    expect_same(stats.mean, full.mean, "mean");
    expect_same(stats.rstd, full.rstd, "rstd");
    expect_same(stats.stats, full.stats);
    EXPECT_TRUE(stats.y.exact.empty() && stats.xhat.exact.empty());
    const RmsNormFwdReference rfull = reference_rmsnorm_fwd(x, {}, kRows, kCols, eps);
    const RmsNormFwdReference rstats = reference_rmsnorm_fwd_statistics(x, kRows, kCols, eps);
    expect_same(rstats.rrms, rfull.rrms, "rrms");
    expect_same(rstats.stats, rfull.stats);
    EXPECT_TRUE(rstats.y.exact.empty() && rstats.xhat.exact.empty());
  }
  EXPECT_THROW(reference_layernorm_fwd_statistics(x, kRows, kCols + 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace normcheck
