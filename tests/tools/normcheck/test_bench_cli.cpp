// `normcheck bench` end to end through the real binary, in --quick mode: the
// JSON contract of design.md, every kernel of the table measured (or its
// decline reported), the ratios computed from the figures they divide, and bad
// usage giving exit 2 with a message. No speed is asserted: speed is measured
// by the benchmark, never tested.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck_cli.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

using test_support::CliRun;

CliRun normcheck(const std::string& args) { return test_support::run_normcheck(args); }

// One quick run shared by the tests below (it takes a few seconds).
const nlohmann::json& quick_json() {
  static const nlohmann::json document = [] {
    const CliRun run = normcheck("bench --quick --json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  }();
  return document;
}

TEST(BenchCli, JsonHasTheContractFields) {
  const auto& doc = quick_json();
  ASSERT_TRUE(doc.contains("copy_gbps"));
  EXPECT_GT(doc["copy_gbps"].get<double>(), 0);
  for (const char* field : {"stream_fwd_gbps", "stream_bwd_gbps", "stream_add_gbps"}) {
    ASSERT_TRUE(doc.contains(field)) << field;
    EXPECT_GT(doc[field].get<double>(), 0) << field;
  }
  ASSERT_TRUE(doc["results"].is_array());
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& r : doc["results"]) {
    for (const char* field : {"kernel", "op", "direction", "dtype"})
      EXPECT_TRUE(r[field].is_string()) << field << " in " << r.dump();
    for (const char* field : {"rows", "cols"}) EXPECT_TRUE(r[field].is_number_integer()) << field;
    for (const char* field : {"gbps", "ratio_to_copy", "ratio_to_stream"}) EXPECT_TRUE(r[field].is_number()) << field;
    EXPECT_TRUE(r.contains("ratio_to_onednn"));
    EXPECT_TRUE(r["op"] == "layernorm" || r["op"] == "rmsnorm" || r["op"] == "layernorm_linear" ||
                r["op"] == "rmsnorm_linear")
        << r.dump();
    EXPECT_TRUE(r["direction"] == "fwd" || r["direction"] == "bwd") << r.dump();
  }
}

// The bench iterates the table: every kernel is measured on every quick shape
// or reported as declining it.
TEST(BenchCli, MeasuresEveryKernelOfTheTable) {
  const auto& doc = quick_json();
  std::set<std::string> seen;
  for (const auto& r : doc["results"]) seen.insert(r["kernel"].get<std::string>());
  for (const auto& d : doc["declined"]) {
    EXPECT_FALSE(d["reason"].get<std::string>().empty());
    seen.insert(d["kernel"].get<std::string>());
  }
  for (const Kernel& k : kernel_table()) EXPECT_TRUE(seen.count(std::string(k.name))) << k.name;
}

// The ratios are the quotients of the figures printed beside them (to the
// printed double's precision: relative 1e-12 is far above double rounding of
// one division, 2^-53).
TEST(BenchCli, RatiosDivideTheFiguresTheyStandFor) {
  const auto& doc = quick_json();
  const double copy = doc["copy_gbps"].get<double>();
  for (const auto& r : doc["results"]) {
    const double gbps = r["gbps"].get<double>();
    EXPECT_NEAR(r["ratio_to_copy"].get<double>(), gbps / copy, 1e-12 * gbps / copy);
    // The streaming limit that moves the kernel's arrays: its direction's, or
    // the residual add's for the fused rows.
    const std::string name = r["stream_limit"].get<std::string>();
    const Kernel* k = find_kernel(r["kernel"].get<std::string>());
    ASSERT_NE(k, nullptr) << r.dump();
    EXPECT_EQ(name, k->spec && k->spec->add ? "stream_add_gbps"
                    : r["direction"] == "bwd"  ? "stream_bwd_gbps"
                                               : "stream_fwd_gbps")
        << r.dump();
    const double limit = doc[name].get<double>();
    EXPECT_NEAR(r["ratio_to_stream"].get<double>(), gbps / limit, 1e-12 * gbps / limit) << r.dump();
    // The oneDNN peer: same op, direction, dtype and shape, named *.onednn.
    const nlohmann::json* peer = nullptr;
    for (const auto& o : doc["results"])
      if (o["kernel"].get<std::string>().find(".onednn") != std::string::npos &&
          o["op"] == r["op"] && o["direction"] == r["direction"] && o["dtype"] == r["dtype"] &&
          o["rows"] == r["rows"] && o["cols"] == r["cols"])
        peer = &o;
    if (!peer) {
      EXPECT_TRUE(r["ratio_to_onednn"].is_null()) << r.dump();
      continue;
    }
    const double expected = gbps / (*peer)["gbps"].get<double>();
    EXPECT_NEAR(r["ratio_to_onednn"].get<double>(), expected, 1e-12 * expected) << r.dump();
  }
}

TEST(BenchCli, TextOutputIsATableWithTheCopyLimit) {
  const CliRun run = normcheck("bench --quick --shape 2x64 --repeats 1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("GB/s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("copy:"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("stream limit"), std::string::npos) << run.out;
}

// The limits run one thread per core whatever NORMCHECK_THREADS gives our
// kernels, and the JSON says both, so a ratio taken with fewer kernel threads
// reads as a fraction of the machine. 3 differs from the core count of a
// 2-core machine, and 1 from that of any machine with more than one.
TEST(BenchCli, JsonGivesTheThreadsOfTheLimitsAndOfOurKernels) {
  // Puts NORMCHECK_THREADS back as it was for the tests after this one, even
  // when an assertion ends this one early.
  struct Restore {
    const char* before = std::getenv("NORMCHECK_THREADS");
    std::string saved = before ? before : "";
    ~Restore() {
      if (before) {
        setenv("NORMCHECK_THREADS", saved.c_str(), 1);
      } else {
        unsetenv("NORMCHECK_THREADS");
      }
    }
  } restore;
  for (const int threads : {1, 3}) {
    setenv("NORMCHECK_THREADS", std::to_string(threads).c_str(), 1);
    const CliRun run =
        normcheck("bench --quick --json --shape 2x64 --repeats 1 --kernel layernorm_fwd.hwy");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto doc = nlohmann::json::parse(run.out);
    EXPECT_EQ(doc["kernel_threads"].get<int>(), threads);
    EXPECT_EQ(doc["stream_threads"].get<unsigned>(), std::thread::hardware_concurrency());
    EXPECT_EQ(doc["environment"]["NORMCHECK_THREADS"], std::to_string(threads));
  }
}

// A 16-bit kernel measured alone (the workload's 16-bit arrays made for it,
// not left over from an earlier kernel of the table): each runs and is in
// the table (`rmsnorm_fwd.hwy_bf16` alone once crashed on a null y).
TEST(BenchCli, EachSixteenBitKernelRunsAlone) {
  int kernels = 0;
  for (const Kernel& k : kernel_table()) {
    if (k.dtype == DType::f32) continue;
    ++kernels;
    const std::string name(k.name);
    const CliRun run = normcheck("bench --quick --shape 2x64 --repeats 1 --kernel " + name);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    EXPECT_NE(run.out.find(name), std::string::npos) << run.out;
  }
  EXPECT_GE(kernels, 8) << "LayerNorm and RMSNorm, forward and backward, bf16 and f16";
}

TEST(BenchCli, BadUsageExitsTwoWithAMessage) {
  for (const char* args : {"bench --kernel no.such.kernel", "bench --seconds -1",
                           "bench --shape 3by4", "bench --shape 0x8", "bench --repeats 0",
                           "bench --no-such-flag"}) {
    const CliRun run = normcheck(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_FALSE(run.err.empty()) << args;
    EXPECT_TRUE(run.out.empty()) << args << ": " << run.out;
  }
}

}  // namespace
}  // namespace normcheck
