// normcheck/huge_pages.h: the advice changes the size of the pages behind an
// array, never its values. large_vector gives n value-initialized elements at
// every size around the 2 MiB page (below it nothing is advised; at and above
// it, the whole huge pages inside the array are), and advising what is not a
// whole huge page (null, short or unaligned ranges) changes nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "normcheck/huge_pages.h"

namespace normcheck {
namespace {

constexpr std::size_t kHugeDoubles = (std::size_t{1} << 21) / sizeof(double);

TEST(HugePages, LargeVectorsAreValueInitializedAtEverySize) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, kHugeDoubles - 1, kHugeDoubles, kHugeDoubles + 1,
                              3 * kHugeDoubles + 7}) {
    std::vector<double> v = large_vector<double>(n);
    ASSERT_EQ(v.size(), n);
    std::size_t nonzero = 0;
    for (const double x : v) nonzero += x != 0.0;
    EXPECT_EQ(nonzero, 0u) << n;
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);  // every page written and read back
    for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], static_cast<double>(i)) << n;
  }
}

TEST(HugePages, AdvisingWhatIsNoWholeHugePageChangesNothing) {
  advise_huge_pages(nullptr, 0);
  advise_huge_pages(nullptr, std::size_t{1} << 22);
  std::vector<uint16_t> small(1000, 7);
  advise_huge_pages(small.data() + 1, 999 * sizeof(uint16_t));
  for (const uint16_t x : small) ASSERT_EQ(x, 7);
  std::vector<float> written(3 * kHugeDoubles, 1.5f);  // already touched: the advice may only merge its pages
  advise_huge_pages(written.data() + 3, (written.size() - 3) * sizeof(float));
  for (const float x : written) ASSERT_EQ(x, 1.5f);
}

}  // namespace
}  // namespace normcheck
