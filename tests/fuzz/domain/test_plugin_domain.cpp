// A plugin's declared domain (normcheck_plugin_domain, docs/plugins.md) end to
// end through the normcheck binary, on domain_plugin.c's variants:
//   - a kernel that breaks only outside the domain it declares (flushed
//     squares: rrms = +inf at eps = 0 on tiny rows) has no finding; the same
//     kernel without the declaration is caught (the negative control);
//   - a kernel that breaks inside its declared domain (eps outside the root)
//     is still caught, on problems inside the domain;
//   - `list` prints the domain, `check` declines a problem outside it,
//     `fuzz --wide-range` lists what lies outside as limits, not findings;
//   - a text that is not a domain refuses the plugin (exit 2) naming the
//     library, the kernel and the term; --domain does what the symbol does.
// Every campaign has a fixed seed and count (--seed 7 --cases 300): the same
// cases on every machine.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "normcheck/io.h"
#include "normcheck/row_file.h"
#include "normcheck_cli.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;
using test_support::CliRun;
using test_support::run_normcheck;
using test_support::scratch_dir;

// 300 cases reach the tiny rows at eps = 0 that the flushed squares break on
// (the negative control below fails without them).
constexpr const char* kCampaign = " --cases 300 --seed 7 --timeout-ms 2000 --json";

std::string corpus(const std::string& name) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  return " --corpus '" + dir.string() + "'";
}

nlohmann::json fuzz(const std::string& plugin, const std::string& name, const std::string& more, int expect_exit) {
  const CliRun run = run_normcheck("fuzz --plugin '" + plugin + "'" + kCampaign + corpus(name) + more);
  EXPECT_EQ(run.exit_code, expect_exit) << run.err << run.out;
  return nlohmann::json::parse(run.out, nullptr, false);
}

// Every finding's problem as saved: its eps.
std::vector<float> finding_eps(const nlohmann::json& doc) {
  std::vector<float> eps;
  for (const auto& f : doc["findings"]) {
    if (!f["input"].is_string()) continue;
    for (const Problem& p : read_problem_file(f["input"].get<std::string>()).problems) eps.push_back(p.eps);
  }
  return eps;
}

TEST(PluginDomain, BreakingOnlyOutsideTheDeclaredDomainIsNoFinding) {
  const nlohmann::json doc = fuzz(DOMAIN_FTZ_DECLARED, "ftz_declared", "", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["findings"].size(), 0u) << doc.dump(2);
  EXPECT_EQ(doc["cases"], 300);
}

// The negative control: the same kernel, no declaration, the same cases.
TEST(PluginDomain, TheSameKernelWithoutTheDeclarationIsCaught) {
  const nlohmann::json doc = fuzz(DOMAIN_FTZ_UNDECLARED, "ftz_undeclared", "", 1);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_GT(doc["findings"].size(), 0u);
  for (const float eps : finding_eps(doc)) EXPECT_EQ(eps, 0.0f) << "the flushed squares only matter at eps = 0";
}

// --domain declares what the symbol would: the undeclared kernel has no finding.
TEST(PluginDomain, TheDomainOptionDeclaresItToo) {
  const nlohmann::json doc = fuzz(DOMAIN_FTZ_UNDECLARED, "ftz_option", " --domain 'eps>=1e-6'", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["findings"].size(), 0u) << doc.dump(2);
}

TEST(PluginDomain, BreakingInsideTheDeclaredDomainIsStillCaught) {
  const nlohmann::json doc = fuzz(DOMAIN_OUTSIDE_ROOT, "outside_root", "", 1);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_GT(doc["findings"].size(), 0u);
  const std::vector<float> eps = finding_eps(doc);
  ASSERT_FALSE(eps.empty());
  for (const float e : eps) EXPECT_GE(e, 1e-6f) << "a finding outside the declared domain";
}

// The realistic preset (docs/plugins.md) leaves out the flushed squares'
// rows (eps = 0, sigma^2 below FLT_MIN): the undeclared kernel has no finding
// under --domain realistic, and no case is declined (the generators construct
// rows inside the preset); with --wide-range what breaks outside it is a
// limit that names the term it lies beyond.
TEST(PluginDomain, TheRealisticPresetLeavesOutTheFlushedSquares) {
  const nlohmann::json doc = fuzz(DOMAIN_FTZ_UNDECLARED, "ftz_realistic", " --domain realistic", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["findings"].size(), 0u) << doc.dump(2);
  EXPECT_EQ(doc["cases"], 300);
  for (const auto& k : doc["kernels"]) EXPECT_TRUE(k["declined"] == 0 && k["judged"] == 300) << k.dump();
  // `list` prints the preset as its terms, and --json has each term's field.
  const CliRun list =
      run_normcheck(std::string("list --json --domain realistic --plugin '") + DOMAIN_FTZ_UNDECLARED + "'");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  bool found = false;
  const nlohmann::json listed = nlohmann::json::parse(list.out);
  for (const auto& k : listed["kernels"])
    if (k["name"] == "ftz_undeclared.rmsnorm_fwd") {
      found = true;
      EXPECT_EQ(k["range"]["text"], "eps>=1e-12 |x|<=2^62/sqrt(d) finite |x|>=2^-126 |mean|/sigma<=10000 sigma>=2^-63");
      EXPECT_EQ(k["range"]["max_mean_over_sigma"].get<double>(), 1e4);
      EXPECT_EQ(k["range"]["min_sigma"].get<double>(), 0x1p-63);
      EXPECT_EQ(k["range"]["min_abs_x"].get<double>(), 0x1p-126);
    } else {
      EXPECT_TRUE(k["range"]["max_mean_over_sigma"].is_null()) << k["name"];  // no limit
    }
  EXPECT_TRUE(found);
  const nlohmann::json wide = fuzz(DOMAIN_FTZ_UNDECLARED, "ftz_realistic_wide", " --domain realistic --wide-range", 0);
  ASSERT_FALSE(wide.is_discarded());
  EXPECT_EQ(wide["findings"].size(), 0u) << wide.dump(2);
  ASSERT_GT(wide["limits"].size(), 0u) << wide.dump(2);
  for (const auto& limit : wide["limits"])
    EXPECT_NE(limit["detail"].get<std::string>().find("outside the kernel's declared domain "), std::string::npos)
        << limit.dump();
}

// A kernel that breaks at every eps (eps outside the root) is still caught
// inside the preset, on problems inside it.
TEST(PluginDomain, BreakingInsideTheRealisticPresetIsStillCaught) {
  const nlohmann::json doc = fuzz(DOMAIN_OUTSIDE_ROOT, "outside_root_realistic", " --domain realistic", 1);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_GT(doc["findings"].size(), 0u);
  for (const float e : finding_eps(doc)) EXPECT_GE(e, 1e-12f) << "a finding outside the preset";
}

// --wide-range draws outside the domain too (eps = 0 among them, where the
// negative control above is caught): what breaks there is a limit, listed
// with the declared limit it lies beyond (one per label), never a finding.
TEST(PluginDomain, WideRangeListsWhatLiesOutsideAsLimits) {
  const nlohmann::json doc = fuzz(DOMAIN_FTZ_DECLARED, "ftz_wide", " --wide-range", 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["findings"].size(), 0u) << doc.dump(2);
  ASSERT_GT(doc["limits"].size(), 0u) << doc.dump(2);
  for (const auto& limit : doc["limits"])
    EXPECT_NE(limit["detail"].get<std::string>().find("outside the kernel's declared domain "), std::string::npos)
        << limit.dump();
}

TEST(PluginDomain, ListPrintsTheDomain) {
  const CliRun text = run_normcheck(std::string("list --plugin '") + DOMAIN_FTZ_DECLARED + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("eps>=1e-06 |x|<=2^62/sqrt(d)"), std::string::npos) << text.out;
  const CliRun json = run_normcheck(std::string("list --json --plugin '") + DOMAIN_FTZ_DECLARED + "'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  bool found = false;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  for (const auto& k : doc["kernels"])
    if (k["name"] == "ftz_declared.rmsnorm_fwd") {
      found = true;
      EXPECT_EQ(k["range"]["min_eps"].get<double>(), static_cast<double>(1e-6f));
      EXPECT_EQ(k["range"]["text"], "eps>=1e-06 |x|<=2^62/sqrt(d)");
    }
  EXPECT_TRUE(found);
}

// `check` on a problem outside the domain declines it, naming the limit, and
// with nothing judged exits 2 (docs/cli.md, "Nothing judged is never a pass");
// the same problem is a failure for the kernel that declares nothing.
TEST(PluginDomain, CheckDeclinesAProblemOutsideTheDomain) {
  const fs::path input = scratch_dir() / "tiny.txt";
  Problem tiny;
  tiny.rows = 1;
  tiny.cols = 2;
  tiny.x = {0x1p-70f, -0x1p-70f};  // squares 2^-140: subnormal, which the kernel flushes
  tiny.eps = 0.0f;
  write_file_atomically(input, problem_file_text(Op::rmsnorm_fwd, DType::f32, tiny, {}, {}));
  const CliRun declared = run_normcheck(std::string("check --json --plugin '") + DOMAIN_FTZ_DECLARED +
                                        "' --input '" + input.string() + "'");
  EXPECT_EQ(declared.exit_code, 2) << declared.err << declared.out;
  EXPECT_NE(declared.out.find("eps = 0 is outside the kernel's declared domain eps>=1e-06"), std::string::npos)
      << declared.out;
  EXPECT_NE(declared.err.find("nothing judged: declined 1 of 1 rows: eps = 0 is outside"), std::string::npos)
      << declared.err;
  const CliRun undeclared = run_normcheck(std::string("check --json --plugin '") + DOMAIN_FTZ_UNDECLARED +
                                          "' --input '" + input.string() + "'");
  EXPECT_EQ(undeclared.exit_code, 1) << undeclared.err << undeclared.out;
}

TEST(PluginDomain, AMalformedDomainRefusesThePlugin) {
  const CliRun run = run_normcheck(std::string("list --plugin '") + DOMAIN_MALFORMED + "'");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(fs::path(DOMAIN_MALFORMED).filename().string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("kernel 'malformed.rmsnorm_fwd'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("'d=0..10'"), std::string::npos) << run.err;
  const CliRun option = run_normcheck(std::string("list --plugin '") + DOMAIN_FTZ_UNDECLARED + "' --domain 'eps>0'");
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.err.find("'eps>0'"), std::string::npos) << option.err;
}

}  // namespace
}  // namespace normcheck
