// The row-file parser: what it accepts, what it rejects (naming line and
// column), and that format_float_exact round-trips every float it is given.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>

#include <gtest/gtest.h>

#include "normcheck/row_file.h"
#include "test_seed.h"

namespace normcheck {
namespace {

uint64_t test_seed() {
  return test::fixed_seed(20261121);
}

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(RowFile, RowsMayDifferInLengthAndMixSeparators) {
  const auto rows = parse_rows("1, 2 3\n\n# comment line\n4,5 # trailing comment\n\t6\n", "t");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].values, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(rows[0].line, 1);
  EXPECT_EQ(rows[1].values, (std::vector<float>{4, 5}));
  EXPECT_EQ(rows[1].line, 4);
  EXPECT_EQ(rows[2].values, (std::vector<float>{6}));
}

TEST(RowFile, AcceptsHexFloatsAndSpecials) {
  const auto rows = parse_rows("0x1.8p+1 -0x1p-149 nan INF -inf +inf -0", "t");
  ASSERT_EQ(rows.size(), 1u);
  const auto& v = rows[0].values;
  EXPECT_EQ(v[0], 3.0f);
  EXPECT_EQ(v[1], -0x1p-149f);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], INFINITY);
  EXPECT_EQ(v[4], -INFINITY);
  EXPECT_EQ(v[5], INFINITY);
  EXPECT_EQ(bits(v[6]), 0x80000000u);
}

TEST(RowFile, CrlfLineEndingsAreSeparators) {
  const auto rows = parse_rows("1 2\r\n3\r\n", "t");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].values, (std::vector<float>{3}));
}

// Each bad token must be reported at its own line and column.
TEST(RowFile, BadTokensNameLineAndColumn) {
  struct Case {
    const char* text;
    int64_t line, column;
  };
  const Case cases[] = {
      {"1 2\n3 abc 4\n", 2, 3},     {"1e39\n", 1, 1},       {"-1e39", 1, 1},
      {"1,,2 nan(0x1)", 1, 6},      {"infinity", 1, 1},     {"0x1p", 1, 1},
      {"1.2.3", 1, 1},              {"1 2 3\n\n  --1", 3, 3}, {"\x01\x02", 1, 1},
  };
  for (const Case& c : cases) {
    try {
      parse_rows(c.text, "f.txt");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const RowFileError& e) {
      EXPECT_EQ(e.line, c.line) << c.text;
      EXPECT_EQ(e.column, c.column) << c.text;
      const std::string where = "f.txt:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ":";
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
}

TEST(RowFile, DecimalsBelowTheSubnormalRangeRoundToZero) {
  const auto rows = parse_rows("1e-50 -1e-50 1e-45", "t");
  EXPECT_EQ(rows[0].values[0], 0.0f);
  EXPECT_EQ(bits(rows[0].values[1]), 0x80000000u);
  EXPECT_EQ(rows[0].values[2], 0x1p-149f);  // the smallest subnormal
}

TEST(RowFile, EmptyAndCommentOnlyFilesHaveNoRows) {
  EXPECT_TRUE(parse_rows("", "t").empty());
  EXPECT_TRUE(parse_rows("# nothing\n\n   \n", "t").empty());
}

// format_float_exact then parse_float_token gives back the same bits, for
// random bit patterns (all classes: subnormals, normals, specials) and the edges.
TEST(RowFile, ExactFormatRoundTrips) {
  std::mt19937 rng(static_cast<uint32_t>(test_seed()));
  std::vector<uint32_t> patterns = {0x00000000u, 0x80000000u, 0x00000001u, 0x007fffffu,
                                    0x00800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u};
  for (int i = 0; i < 100000; ++i) patterns.push_back(rng());
  for (const uint32_t p : patterns) {
    float f;
    std::memcpy(&f, &p, sizeof f);
    const float back = parse_float_token(format_float_exact(f));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(back));
    } else {
      EXPECT_EQ(bits(back), p) << format_float_exact(f);
    }
  }
}

}  // namespace
}  // namespace normcheck
