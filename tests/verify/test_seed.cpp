// normcheck/seed.h, the one parser of seeds (--seed and NORMCHECK_SEED), and
// tests/support/test_seed.h, which the randomized tests take their seed from.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "normcheck/seed.h"
#include "test_seed.h"

namespace normcheck {
namespace {

// Sets NORMCHECK_SEED (or unsets it for nullptr) for one scope and puts back
// what the test process was started with.
class ScopedSeedEnv {
 public:
  explicit ScopedSeedEnv(const char* value) {
    if (const char* old = std::getenv("NORMCHECK_SEED")) old_ = old;
    if (value) ::setenv("NORMCHECK_SEED", value, 1);
    else ::unsetenv("NORMCHECK_SEED");
  }
  ~ScopedSeedEnv() {
    if (old_) ::setenv("NORMCHECK_SEED", old_->c_str(), 1);
    else ::unsetenv("NORMCHECK_SEED");
  }

 private:
  std::optional<std::string> old_;
};

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(Seed, ParsesDecimalAndHex) {
  EXPECT_EQ(parse_seed("0"), 0u);
  EXPECT_EQ(parse_seed("20261121"), 20261121u);
  EXPECT_EQ(parse_seed("010"), 10u);  // leading zeros stay decimal
  EXPECT_EQ(parse_seed("0x1F"), 31u);
  EXPECT_EQ(parse_seed("0X1f"), 31u);
  EXPECT_EQ(parse_seed("18446744073709551615"), kMax);
  EXPECT_EQ(parse_seed("0xffffffffffffffff"), kMax);
  EXPECT_EQ(parse_seed("10124552135940249666"), 10124552135940249666u);  // a seed CI printed
}

TEST(Seed, RefusesEverythingElseNamingTheText) {
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "18446744073709551616", "99999999999999999999", "0x",
                          "0x10000000000000000", "banana", "1e3", "0b1", "12abc", "0x1g", "1.0"}) {
    try {
      parse_seed(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("bad seed '" + std::string(bad) + "'", 0), 0u) << e.what();
    }
  }
}

TEST(Seed, FromTheEnvironment) {
  {
    ScopedSeedEnv env(nullptr);
    EXPECT_EQ(seed_from_env(), std::nullopt);
  }
  {
    ScopedSeedEnv env("");
    EXPECT_EQ(seed_from_env(), std::nullopt);
  }
  {
    ScopedSeedEnv env("0x10");
    EXPECT_EQ(seed_from_env(), 16u);
    EXPECT_EQ(test::fixed_seed(7), 16u);
  }
  {
    ScopedSeedEnv env(nullptr);
    EXPECT_EQ(test::fixed_seed(7), 7u);
  }
  {
    ScopedSeedEnv env("banana");
    try {
      seed_from_env();
      ADD_FAILURE() << "accepted NORMCHECK_SEED=banana";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("bad NORMCHECK_SEED 'banana'"), std::string::npos) << e.what();
    }
  }
}

// A test given a bad NORMCHECK_SEED stops with the message and exit 2
// instead of running with some other seed.
TEST(SeedDeathTest, ATestWithABadSeedStops) {
  ScopedSeedEnv env("12abc");
  EXPECT_EXIT(test::fixed_seed(7), testing::ExitedWithCode(2), "bad NORMCHECK_SEED '12abc'");
}

}  // namespace
}  // namespace normcheck
