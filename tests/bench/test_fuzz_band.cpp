// bench/fuzz_band.h against this build's generator (properties/generators.h):
// every problem drawn at a size has at most fuzz_d_cap(size) columns, and the
// widest of a few hundred draws has more than half of them, so a band of
// normcheck_fuzz_throughput ("d <= 64") holds what its label says, and more
// than the next smaller band.
#include <gtest/gtest.h>

#include <algorithm>

#include "fuzz_band.h"
#include "generators.h"
#include "test_seed.h"

namespace {

using normcheck::Problem;
using normcheck::bench::fuzz_d_cap;
using normcheck::bench::fuzz_size_for;
using normcheck::bench::kFuzzSizes;

TEST(FuzzBand, TheCapBoundsTheGeneratedWidthsAtEverySize) {
  const uint64_t seed = normcheck::test::fixed_seed(20261124);
  const rc::Gen<Problem> gen = normcheck::props::gen_problem({});  // a LayerNorm forward, every width allowed
  for (int size = 0; size < kFuzzSizes; ++size) {
    int64_t widest = 0;
    for (uint64_t i = 0; i < 600; ++i) {
      const rc::Random::Key key = {seed, static_cast<uint64_t>(size), i, 0x62616e64ull};
      widest = std::max(widest, gen(rc::Random(key), size).value().cols);
    }
    EXPECT_LE(widest, fuzz_d_cap(size)) << "size " << size;
    EXPECT_GT(2 * widest, fuzz_d_cap(size)) << "size " << size;
  }
}

TEST(FuzzBand, EachWidthMapsToTheLargestSizeWithinIt) {
  EXPECT_EQ(fuzz_size_for(2), std::nullopt);
  EXPECT_EQ(fuzz_size_for(3), 11);
  EXPECT_EQ(fuzz_size_for(4), 13);
  EXPECT_EQ(fuzz_size_for(64), 36);
  EXPECT_EQ(fuzz_size_for(1024), 60);
  EXPECT_EQ(fuzz_size_for(65536), 100);
  EXPECT_EQ(fuzz_size_for(65537), std::nullopt);
  for (int64_t d = 3; d <= 65536; d += d / 3) {
    const int size = *fuzz_size_for(d);
    EXPECT_LE(fuzz_d_cap(size), d);
    if (size + 1 < kFuzzSizes) {
      EXPECT_GT(fuzz_d_cap(size + 1), d) << "d " << d;
    }
  }
}

}  // namespace
