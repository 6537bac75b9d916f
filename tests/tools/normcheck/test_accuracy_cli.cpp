// `normcheck accuracy` end to end: a baseline written, held, and failed by a
// kernel that got worse; the exits of bad usage and of nothing judged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "normcheck_cli.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

using test_support::CliRun;
using test_support::read_whole_file;
using test_support::scratch_dir;

CliRun normcheck(const std::string& args) { return test_support::run_normcheck(args); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

fs::path write_file(const std::string& name, const std::string& content) {
  const fs::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// The two-pass LayerNorm's baseline, made once (about 4 s).
const fs::path& twopass_baseline() {
  static const fs::path path = [] {
    const fs::path p = scratch_dir() / "twopass.txt";
    const CliRun r = normcheck("accuracy --kernel layernorm_fwd.twopass --update-baseline " + p.string());
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "baseline written to " + p.string())) << r.out;
    return p;
  }();
  return path;
}

TEST(AccuracyCli, AKernelHeldToItsOwnBaselinePasses) {
  const CliRun r = normcheck("accuracy --kernel layernorm_fwd.twopass --check-baseline " + twopass_baseline().string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "baseline: no figure got worse than ")) << r.out;
  EXPECT_TRUE(contains(r.out, "mean_sigma_10_1e3")) << r.out;
}

// The one-pass control under the two-pass kernel's name, as a kernel whose
// author switched it to one pass: worse than the baseline, and beyond its
// bound on the |mean|/sigma classes (a finding whatever the factor).
TEST(AccuracyCli, AKernelThatGotWorseFailsWithTheFiguresThatGrew) {
  std::string text = read_whole_file(twopass_baseline());
  for (std::size_t at; (at = text.find("layernorm_fwd.twopass ")) != std::string::npos;)
    text.replace(at, 22, "layernorm_fwd.naive_onepass ");
  const fs::path renamed = write_file("renamed.txt", text);
  const CliRun r = normcheck("accuracy --kernel layernorm_fwd.naive_onepass --worse-by 10 --check-baseline " +
                             renamed.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "got worse than " + renamed.string() + " by more than 10x:")) << r.out;
  EXPECT_TRUE(contains(r.out, "layernorm_fwd.naive_onepass mean_sigma_10_1e3 rstd: error/bound ")) << r.out;
  EXPECT_TRUE(contains(r.out, "failed (a finding whatever the baseline")) << r.out;
  EXPECT_TRUE(contains(r.out, "layernorm_fwd.naive_onepass mean_sigma_10_1e3: ")) << r.out;
  // A failing kernel's figures are not recorded as its baseline.
  const fs::path none = scratch_dir() / "onepass.txt";
  const CliRun u = normcheck("accuracy --kernel layernorm_fwd.naive_onepass --update-baseline " + none.string());
  EXPECT_EQ(u.exit_code, 1) << u.out << u.err;
  EXPECT_TRUE(contains(u.out, "baseline not written: a problem failed")) << u.out;
  EXPECT_FALSE(fs::exists(none));
}

TEST(AccuracyCli, JsonListsEachClassAndTheComparison) {
  const CliRun r = normcheck("accuracy --json --kernel layernorm_fwd.twopass --check-baseline " +
                             twopass_baseline().string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["kernels"].size(), 1u);
  const auto& k = doc["kernels"][0];
  EXPECT_EQ(k["name"], "layernorm_fwd.twopass");
  EXPECT_GT(k["judged"].get<int>(), 0);
  EXPECT_TRUE(k["failed"].empty());
  bool band = false;
  for (const auto& f : k["figures"])
    band = band || (f["class"] == "mean_sigma_10_1e3" && f["output"] == "all" && f["error_over_bound"] < 1);
  EXPECT_TRUE(band) << r.out;
  EXPECT_TRUE(doc["baseline"]["worse"].empty());
}

TEST(AccuracyCli, BadUsageAndBadFilesExitTwo) {
  const std::string b = twopass_baseline().string();
  const fs::path malformed = write_file("malformed.txt", "# seed 5\nlayernorm_fwd.twopass d_1_16 all 4 x 0 0 0\n");
  const struct {
    std::string args, message;
  } bad[] = {
      {"accuracy", "no kernel to measure"},
      {"accuracy --kernel nope", "unknown kernel 'nope'"},
      {"accuracy --kernel layernorm_fwd.twopass --check-baseline " + b + " --update-baseline /tmp/x", "exclusive"},
      {"accuracy --kernel layernorm_fwd.twopass --check-baseline " + b + " --worse-by 0.5", "at least 1"},
      {"accuracy --kernel layernorm_fwd.twopass --check-baseline " + b + " --seed 3", "measured with seed"},
      {"accuracy --kernel layernorm_fwd.twopass --check-baseline " + malformed.string(),
       malformed.string() + ":2: 'x' is not a non-negative number"},
      {"accuracy --kernel layernorm_fwd.twopass --check-baseline /nonexistent/b.txt", "/nonexistent/b.txt"},
  };
  for (const auto& c : bad) {
    const CliRun r = normcheck(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
  }
}

// Every problem outside the kernel's declared domain: nothing judged, exit 2,
// and no baseline written.
TEST(AccuracyCli, NothingJudgedIsNeverAPass) {
  const fs::path none = scratch_dir() / "declined.txt";
  const CliRun r = normcheck(std::string("accuracy --plugin ") + NORMCHECK_V2_NORMS +
                             " --kernel rmsnorm.llama --domain d=1..4 --update-baseline " + none.string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "rmsnorm.llama: nothing judged: declined ")) << r.err;
  EXPECT_TRUE(contains(r.out, "baseline not written: a kernel had nothing judged")) << r.out;
  EXPECT_FALSE(fs::exists(none));
}

}  // namespace
}  // namespace normcheck
