// `normcheck report` end to end through the real binary: the four files of a
// --quick run (results.json against its schema, junit.xml parsed and
// consistent, report.html self-contained, report.md) and its fuzz findings, the accuracy baseline
// checked in and a tightened copy of it failing, an interrupted run leaving
// the previous report intact, and bad usage giving exit 2.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_schema_subset.h"
#include "normcheck/kernel.h"
#include "normcheck_cli.h"
#include "xml_parse.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::read_whole_file;
using test_support::run_normcheck;
using test_support::scratch_dir;

const fs::path kBaseline = fs::path(NORMCHECK_SOURCE_DIR) / "reports/baseline/accuracy_quick.txt";

json schema() { return json::parse(read_whole_file(NORMCHECK_RESULTS_SCHEMA)); }

const json* kernel_entry(const json& doc, std::string_view name) {
  for (const auto& k : doc["kernels"])
    if (k["name"] == name) return &k;
  return nullptr;
}

TEST(ReportCli, QuickRunWritesFourValidFiles) {
  const fs::path out = scratch_dir() / "quick";
  fs::remove_all(out);
  const auto run = run_normcheck("report --quick --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find((out / "report.html").string()), std::string::npos) << "the path of the report is printed";
  EXPECT_NE(run.err.find("seed"), std::string::npos) << "the seed is printed";

  // results.json: its schema, and the kernel table in it.
  const json doc = json::parse(read_whole_file(out / "results.json"));
  const auto errors = test_support::validate(doc, schema());
  EXPECT_TRUE(errors.empty()) << errors.size() << " violations, first: " << (errors.empty() ? "" : errors[0]);
  ASSERT_EQ(doc["kernels"].size(), kernel_table().size());
  for (const Kernel& k : kernel_table()) EXPECT_NE(kernel_entry(doc, k.name), nullptr) << k.name;
  EXPECT_FALSE(doc["claims"].empty());
  ASSERT_FALSE(doc["bench"].is_null());
  EXPECT_FALSE(doc["bench"]["results"].empty());

  // The controls are caught; ours are trusted (the run exited 0); a third
  // party's verdict names the default bound it is held to; the oneDNN backward
  // declines rows whose variance float cannot hold instead of failing on them;
  // libtorch's backward failures come with their reason, and libtorch's rows
  // are also measured against the bound of the kernel that reimplements them.
  for (const Kernel& k : kernel_table()) {
    const json& entry = *kernel_entry(doc, k.name);
    if (k.origin == Origin::control) {
      EXPECT_EQ(entry["grade"], "caught") << k.name;
    }
    if (k.origin == Origin::ours) {
      EXPECT_EQ(entry["grade"], "trusted") << k.name << ": " << entry["headline"];
    }
    if (k.origin == Origin::third_party) {
      const std::string expected = k.dtype == DType::f32 ? "the default bound (what a careful float32 two-pass"
                                                         : "the default bound with the outputs rounded to";
      EXPECT_EQ(entry["bound"].get<std::string>().rfind(expected, 0), 0u) << k.name << ": " << entry["bound"];
    }
  }
  // --quick's bench shapes are all in cache: the speed says so.
  const json& twopass_speed = (*kernel_entry(doc, "layernorm_fwd.twopass"))["speed"];
  EXPECT_TRUE(twopass_speed["in_cache"].get<bool>()) << twopass_speed;
  EXPECT_NE(twopass_speed["text"].get<std::string>().find("in cache"), std::string::npos) << twopass_speed;
#if NORMCHECK_HAVE_ONEDNN
  const json& onednn = *kernel_entry(doc, "layernorm_bwd.onednn");
  EXPECT_GT(onednn["rows_declined"].get<int>(), 0);
  EXPECT_NE(onednn["declines"].dump().find("oneDNN takes the variance"), std::string::npos) << onednn["declines"];
  EXPECT_EQ(onednn["rows_failed"], 0) << onednn["headline"];
#endif
#if NORMCHECK_HAVE_TORCH
  const json& torch = *kernel_entry(doc, "layernorm_bwd.torch");
  if (torch["rows_failed"].get<int>() > 0) {
    EXPECT_NE(torch["notes"].dump().find("rstd^3"), std::string::npos) << torch["notes"];
  }
  ASSERT_FALSE(torch["algorithm_bound"].is_null());
  EXPECT_EQ(torch["algorithm_bound"]["kernel"], "layernorm_bwd.pytorch_form");
  // libtorch's bf16 backward fails the quick workload's batch on its bf16 dbeta
  // partials (docs/accuracy_backward.md), and the note says so.
  const json& torch_bf16 = *kernel_entry(doc, "layernorm_bwd.torch_bf16");
  EXPECT_NE(torch_bf16["failing_families"].dump().find("many_rows"), std::string::npos) << torch_bf16["headline"];
  EXPECT_NE(torch_bf16["notes"].dump().find("Why on batches: on 4096 rows of d = 64 (many_rows) dbeta"),
            std::string::npos)
      << torch_bf16["notes"];
#endif

  // junit.xml: well-formed, counts that match its test cases, one case per kernel x check.
  const auto xml = test_support::parse_xml(read_whole_file(out / "junit.xml"));
  ASSERT_EQ(xml.name, "testsuites");
  std::size_t kernel_cases = 0;
  for (const auto* suite : xml.all("testsuite")) {
    const auto cases = suite->all("testcase");
    EXPECT_EQ(std::stoul(suite->attributes.at("tests")), cases.size());
    std::size_t failures = 0;
    for (const auto* c : cases) failures += !c->all("failure").empty();
    EXPECT_EQ(std::stoul(suite->attributes.at("failures")), failures);
    if (suite->attributes.at("name") == "normcheck.kernels") kernel_cases = cases.size();
  }
  EXPECT_GE(kernel_cases, 3 * kernel_table().size()) << "within_bound, nonfinite, memory per kernel";

  // report.html: one file that needs nothing else (no script, no link out).
  const std::string html = read_whole_file(out / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)=\"(https?:|//|file:))")));
  EXPECT_NE(html.find("data:image/svg+xml;base64,"), std::string::npos) << "no plot inlined";
  for (const Kernel& k : kernel_table()) EXPECT_NE(html.find(std::string(k.name)), std::string::npos) << k.name;

  const std::string md = read_whole_file(out / "report.md");
  EXPECT_NE(md.find("| kernel |"), std::string::npos);
  EXPECT_LT(md.size(), 65536u) << "report.md must fit a pull-request comment (GitHub's limit is 65536)";

  // The fuzz campaign: every kernel got its 16 generated problems, and each
  // finding's file is in findings/ and replays its label through `check`
  // (exit 1) from the report's folder, as the printed command says.
  const json& fuzz = doc["fuzz"];
  ASSERT_FALSE(fuzz.is_null());
  EXPECT_EQ(fuzz["cases_per_kernel"], 16);
  EXPECT_EQ(fuzz["cases"].get<std::size_t>(), 16 * kernel_table().size());
  for (const json& f : fuzz["findings"]) {
    const std::string kernel = f["kernel"];
    const Kernel* k = find_kernel(kernel);
    ASSERT_NE(k, nullptr) << kernel;
    EXPECT_NE(k->origin, Origin::ours) << "a kernel of ours has a finding: " << f.dump();
    ASSERT_TRUE(fs::is_regular_file(out / f["input"].get<std::string>())) << f.dump();
    // The printed command, run from elsewhere: its findings/ is the report's.
    const std::string replay = f["replay"];
    ASSERT_EQ(replay.rfind("normcheck check --input findings/", 0), 0u) << replay;
    std::string args = replay.substr(std::string("normcheck ").size());
    args.replace(args.find("findings/"), std::string("findings/").size(), (out / "findings").string() + "/");
    const auto again = run_normcheck(args);
    EXPECT_EQ(again.exit_code, 1) << replay << "\n" << again.out << again.err;
    EXPECT_NE(again.out.find("FAIL"), std::string::npos) << replay << "\n" << again.out;
  }
  EXPECT_NE(md.find("## Fuzzing"), std::string::npos);
  EXPECT_NE(html.find("id=\"fuzz\""), std::string::npos);
}

TEST(ReportCli, CheckedInBaselineHoldsAndATightenedOneFails) {
  const fs::path out = scratch_dir() / "baseline";
  // --seed: the baseline's own, whatever NORMCHECK_SEED the tests run under.
  const auto same = run_normcheck("report --quick --no-bench --no-claims --seed 20261121 --out " + out.string() +
                                  " --check-baseline " + kBaseline.string());
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("no kernel got worse"), std::string::npos) << same.out;

  // The baseline made tighter: one kernel's worst error/bound halved.
  std::ifstream in(kBaseline);
  std::ostringstream edited;
  std::string line, victim;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kernel, op, output;
    double ratio = 0, ulp = 0;
    if (victim.empty() && line[0] != '#' && (words >> kernel >> op >> output >> ratio >> ulp) && ratio > 0 &&
        std::isfinite(ratio)) {
      victim = kernel;
      std::ostringstream s;
      s.precision(17);
      s << kernel << " " << op << " " << output << " " << ratio / 2 << " " << ulp;
      line = s.str();
    }
    edited << line << "\n";
  }
  ASSERT_FALSE(victim.empty());
  const fs::path tight = scratch_dir() / "tight_baseline.txt";
  std::ofstream(tight) << edited.str();
  const auto worse = run_normcheck("report --quick --no-bench --no-claims --seed 20261121 --out " + out.string() +
                                   " --check-baseline " + tight.string());
  EXPECT_EQ(worse.exit_code, 1) << worse.out << worse.err;
  const auto at = worse.out.find("  " + victim + " ");
  ASSERT_NE(at, std::string::npos) << "the kernel is named: " << worse.out;
  const std::string regression = worse.out.substr(at, worse.out.find('\n', at) - at);
  EXPECT_NE(regression.find("2x worse"), std::string::npos) << regression;
  EXPECT_NE(regression.find(" on "), std::string::npos) << "and the input: " << regression;
}

TEST(ReportCli, UpdateBaselineWritesAFileTheCheckAccepts) {
  const fs::path out = scratch_dir() / "update", file = scratch_dir() / "new_baseline.txt";
  fs::remove(file);
  const auto update = run_normcheck("report --quick --no-bench --no-claims --seed 20261121 --out " + out.string() +
                                    " --update-baseline " + file.string());
  ASSERT_EQ(update.exit_code, 0) << update.err;
  EXPECT_EQ(read_whole_file(file), read_whole_file(kBaseline))
      << "the checked-in baseline is what this build produces (regenerate it with --update-baseline)";
}

TEST(ReportCli, AnInterruptedRunLeavesThePreviousReport) {
  const fs::path out = scratch_dir() / "interrupted";
  fs::create_directories(out);
  for (const char* name : {"report.html", "report.md", "results.json", "junit.xml"})
    std::ofstream(out / name) << "previous " << name;
  // SIGINT two seconds in: the accuracy workload alone takes longer.
  const std::string command = "timeout -s INT 2 " + std::string(NORMCHECK_BINARY) + " report --quick --out " +
                              out.string() + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 124) << "the run was not interrupted: " << status;
  for (const char* name : {"report.html", "report.md", "results.json", "junit.xml"})
    EXPECT_EQ(read_whole_file(out / name), std::string("previous ") + name);
  // The campaign's findings.partial-<pid> folder may be there if the run got
  // that far: the next run removes it (tools/normcheck/report.cpp). Nothing
  // else may be.
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().filename().string().rfind("findings.partial-", 0) != 0) ++files;
  EXPECT_EQ(files, 4u) << "no temporary file left behind";
}

// findings/ is this run's: a run without the campaign leaves none, and an
// older folder's files do not survive a run that finds other things.
TEST(ReportCli, FindingsFolderIsThisRunsOwn) {
  const fs::path out = scratch_dir() / "findings";
  fs::create_directories(out / "findings");
  std::ofstream(out / "findings" / "stale.txt") << "from an older run";
  const auto without = run_normcheck("report --quick --no-bench --no-claims --no-fuzz --out " + out.string());
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_TRUE(json::parse(read_whole_file(out / "results.json"))["fuzz"].is_null());
  EXPECT_FALSE(fs::exists(out / "findings"));

  std::ofstream(out / "findings.partial-1") << "left by an interrupted run";
  const auto with = run_normcheck("report --quick --no-bench --no-claims --fuzz-cases 4 --out " + out.string());
  ASSERT_EQ(with.exit_code, 0) << with.err;
  const json fuzz = json::parse(read_whole_file(out / "results.json"))["fuzz"];
  EXPECT_EQ(fuzz["cases"].get<std::size_t>(), 4 * kernel_table().size());
  EXPECT_FALSE(fs::exists(out / "findings.partial-1"));
  EXPECT_EQ(fs::exists(out / "findings"), !fuzz["findings"].empty());
  EXPECT_FALSE(fs::exists(out / "findings" / "stale.txt"));
}

TEST(ReportCli, BadUsageIsExitTwoWithAMessage) {
  const fs::path out = scratch_dir() / "usage";
  for (const std::string& args : std::vector<std::string>{
           "--seed banana", "--check-baseline /nonexistent/baseline.txt",
           "--check-baseline " + kBaseline.string() + " --update-baseline /tmp/x", "--fuzz-cases -5",
           "--no-fuzz --fuzz-cases 3"}) {
    const auto run = run_normcheck("report --quick --out " + out.string() + " " + args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_NE(run.err.find("normcheck:"), std::string::npos) << args << ": " << run.err;
  }
  const fs::path malformed = scratch_dir() / "malformed_baseline.txt";
  std::ofstream(malformed) << "# workload quick seed 20261121 simd_target AVX2\nlayernorm_fwd.twopass y\n";
  const auto bad = run_normcheck("report --quick --out " + out.string() + " --check-baseline " + malformed.string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(":2"), std::string::npos) << "names the line: " << bad.err;
}

}  // namespace
}  // namespace normcheck
