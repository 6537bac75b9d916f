// `normcheck claims` end to end through the real binary: --json parses and
// carries every claim with a verdict and a figure, --only selects, an unknown
// id exits 2 with a message.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "normcheck_cli.h"

namespace {

namespace fs = std::filesystem;

using normcheck::test_support::CliRun;

CliRun normcheck(const std::string& args) { return normcheck::test_support::run_normcheck(args); }

TEST(ClaimsCli, JsonOnlySemanticClaims) {
  const CliRun run = normcheck("claims --json --only S1 --only S2 --only S3 --only S4 --only S5 --only A1 --only A2 --only A3 --seed 7");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("seed").get<uint64_t>(), 7u);
  ASSERT_EQ(doc.at("claims").size(), 8u);
  for (const auto& c : doc.at("claims")) {
    EXPECT_NE(c.at("verdict").get<std::string>(), "UNCHECKED") << c.at("id");
    EXPECT_FALSE(c.at("figure").get<std::string>().empty()) << c.at("id");
    EXPECT_FALSE(c.at("source").get<std::string>().empty());
    EXPECT_TRUE(c.at("series").is_array());
  }
  EXPECT_EQ(doc.at("claims")[0].at("id"), "S1");
}

// J6 through --json: the contract fields, the per-coordinate reading in the
// figure, the source named by title, and the sqrt(d) series a report can plot.
TEST(ClaimsCli, JsonJ6StatesThePerCoordinateReading) {
  const CliRun run = normcheck("claims --json --only J6");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto c = nlohmann::json::parse(run.out).at("claims").at(0);
  EXPECT_EQ(c.at("id"), "J6");
  EXPECT_EQ(c.at("verdict"), "HOLDS_APPROXIMATELY");
  const std::string figure = c.at("figure").get<std::string>();
  EXPECT_NE(figure.find("per coordinate"), std::string::npos) << figure;
  EXPECT_NE(figure.find("units factor sqrt(d)"), std::string::npos) << figure;
  EXPECT_NE(figure.find("Post-LN"), std::string::npos) << figure;
  EXPECT_NE(c.at("source").get<std::string>().find("DeepNet"), std::string::npos);
  bool units_series = false;
  for (const auto& s : c.at("series")) units_series = units_series || s.at("name") == "sqrt(d), the units factor";
  EXPECT_TRUE(units_series);
}

TEST(ClaimsCli, TextOutputNamesTheClaim) {
  const CliRun run = normcheck("claims --only A2");
  ASSERT_EQ(run.exit_code, 0) << run.err;  // a REFUTED seed claim is a finding, not a failure
  EXPECT_NE(run.out.find("A2  REFUTED"), std::string::npos) << run.out;
}

TEST(ClaimsCli, UnknownIdExitsTwo) {
  const CliRun run = normcheck("claims --only S9");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown claim id 'S9'"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(ClaimsCli, BadSeedExitsTwo) {
  const CliRun run = normcheck("claims --only S1 --seed banana");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("bad seed"), std::string::npos) << run.err;
}

}  // namespace
