// `normcheck list` and `normcheck check` end to end, through the real binary:
// exit codes, the JSON contract of design.md, the control kernel flagged on
// shifted rows, and bad input giving exit 2 with a message and never a crash.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "normcheck_cli.h"
#include "test_seed.h"

namespace normcheck {
namespace {

namespace fs = std::filesystem;

using test_support::CliRun;
using test_support::scratch_dir;

CliRun normcheck(const std::string& args) { return test_support::run_normcheck(args); }

fs::path write_file(const std::string& name, const std::string& content) {
  const fs::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string example(const char* name) { return std::string(NORMCHECK_SOURCE_DIR) + "/examples/" + name; }

TEST(Cli, ListNamesEveryKernelInTheTable) {
  const CliRun text = normcheck("list");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const Kernel& k : kernel_table()) EXPECT_NE(text.out.find(std::string(k.name)), std::string::npos) << k.name;

  const CliRun json = normcheck("list --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["kernels"].size(), kernel_table().size());
  for (const auto& k : doc["kernels"]) {
    EXPECT_TRUE(k.contains("name") && k.contains("op") && k.contains("bound") && k.contains("range"));
    const Kernel* row = find_kernel(k["name"].get<std::string>());
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(k["ulp_promise"].get<double>(), row->ulp_promise) << row->name;
    // the row's spec, in the text form that reads back to it: its op and dtype's,
    // or its own (Kernel::spec: the fused add rows), of its op
    const SpecParse spec = parse_spec(k["spec"].get<std::string>());
    ASSERT_TRUE(spec.spec) << spec.error;
    EXPECT_EQ(*spec.spec, spec_of(*row)) << row->name;
    EXPECT_EQ(op_of(*spec.spec), row->op) << row->name;
    if (!row->spec) {
      EXPECT_EQ(table_op(*spec.spec), std::pair(row->op, row->dtype)) << row->name;
    }
  }
  EXPECT_NE(text.out.find("spec: rmsnorm bwd dtype=bf16"), std::string::npos);
  EXPECT_NE(text.out.find("promises y within 1 ULP"), std::string::npos)
      << "layernorm_fwd.accurate's promise is not shown";
}

// The check a user runs first: on x = 1e4 + N(0,1) the one-pass control breaks
// its bound and the two-pass and Welford kernels hold theirs.
TEST(Cli, CheckFlagsTheOnePassControlOnShiftedRows) {
  const CliRun run = normcheck("check --json --input " + example("shifted_rows.txt"));
  ASSERT_EQ(run.exit_code, 1) << run.err;  // 1: a finding
  const auto doc = nlohmann::json::parse(run.out);
  std::map<std::string, bool> pass;
  std::map<std::string, std::string> grade;
  for (const auto& k : doc["kernels"]) {
    for (const char* field : {"name", "op", "rows", "max_ulp", "max_error_over_bound", "pass", "grade"})
      EXPECT_TRUE(k.contains(field)) << field;
    pass[k["name"]] = k["pass"];
    grade[k["name"]] = k["grade"];
  }
  ASSERT_TRUE(pass.count("layernorm_fwd.naive_onepass"));
  EXPECT_FALSE(pass["layernorm_fwd.naive_onepass"]);
  EXPECT_TRUE(pass["layernorm_fwd.twopass"]);
  EXPECT_TRUE(pass["layernorm_fwd.welford"]);
  // The grades (reports/grade.h): the control is caught, not graded down;
  // the kernels within their bounds are trusted.
  EXPECT_EQ(grade["layernorm_fwd.naive_onepass"], "caught");
  EXPECT_EQ(grade["layernorm_fwd.twopass"], "trusted");
  EXPECT_EQ(grade["layernorm_fwd.welford"], "trusted");
}

// Every kernel we ship holds its bound on the basic example (rows of several
// lengths, hex-floats, overflowing squares, a constant row, d = 1 and 2); a
// kernel that judged none of them (a fused add's, which needs a residual)
// does not pass (nothing judged is never a pass).
TEST(Cli, OurKernelsPassTheBasicExample) {
  for (const char* op : {"layernorm", "rmsnorm"}) {
    const CliRun run = normcheck(std::string("check --json --op ") + op + " --input " + example("basic.txt"));
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
    const auto doc = nlohmann::json::parse(run.out);
    for (const auto& k : doc["kernels"]) {
      const Kernel* row = find_kernel(k["name"].get<std::string>());
      ASSERT_NE(row, nullptr);
      if (row->origin != Origin::ours) continue;
      EXPECT_EQ(k["pass"].get<bool>(), k["rows"].get<int64_t>() > 0) << k.dump();
    }
  }
}

TEST(Cli, KernelSelectionRunsOnlyTheNamedKernels) {
  const CliRun run = normcheck("check --json --kernel layernorm_fwd.twopass --input " + example("basic.txt"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["kernels"].size(), 1u);
  EXPECT_EQ(doc["kernels"][0]["name"], "layernorm_fwd.twopass");
  // Every row either ran or was declined (basic.txt has a row of |x| ~ 1e30,
  // outside the two-pass kernel's declared range).
  EXPECT_EQ(doc["kernels"][0]["rows"].get<size_t>() + doc["kernels"][0]["declined_rows"].get<size_t>(),
            read_row_file(example("basic.txt")).size());
  EXPECT_EQ(doc["kernels"][0]["declined_rows"], 1);
}

// A norm followed by a Linear: a problem file with nc.weight/nc.bias runs on
// every row of its op, ours within bound, the wrong-side control failing
// (exit 1); a plain row file has no W, so those rows decline every row.
TEST(Cli, CheckReplaysANormLinearProblemFile) {
  const fs::path file = write_file("norm_linear.txt",
                                   "# nc.op layernorm_linear_fwd\n"
                                   "# nc.gamma 0.5 2 -1 0.25\n# nc.beta 0 1 0 -1\n"
                                   "# nc.weight 1 -2 0.5 3\n# nc.weight 0.25 0.25 -1 1\n# nc.bias 0.5 -0.5\n"
                                   "1 2 3 5\n-1 0.5 7 2\n");
  const CliRun run = normcheck("check --json --input " + file.string());
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  int ours = 0, controls = 0;
  for (const auto& k : doc["kernels"]) {
    const Kernel* row = find_kernel(k["name"].get<std::string>());
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->op, Op::layernorm_linear_fwd);
    EXPECT_EQ(k["rows"], 1) << k.dump();
    if (row->origin == Origin::ours) {
      ++ours;
      EXPECT_TRUE(k["pass"].get<bool>()) << k.dump();
    }
    if (row->origin == Origin::control) {
      ++controls;
      EXPECT_FALSE(k["pass"].get<bool>()) << k.dump();
    }
  }
  EXPECT_GE(ours, 2);
  EXPECT_GE(controls, 1);

  // a plain row file has no Linear: every row declined, nothing judged (exit 2)
  const CliRun plain = normcheck("check --json --kernel layernorm_linear_fwd.folded --input " + example("basic.txt"));
  ASSERT_EQ(plain.exit_code, 2) << plain.err;
  EXPECT_NE(plain.err.find("layernorm_linear_fwd.folded: nothing judged"), std::string::npos) << plain.err;
  const auto plain_doc = nlohmann::json::parse(plain.out);
  EXPECT_EQ(plain_doc["kernels"][0]["rows"], 0);
  EXPECT_EQ(plain_doc["kernels"][0]["declined_rows"].get<size_t>(), read_row_file(example("basic.txt")).size());
}

struct BadInput {
  std::string args;
  std::string message;  // a piece of what stderr must say
};

TEST(Cli, BadInputExitsTwoWithAMessage) {
  const std::string basic = example("basic.txt");
  const std::vector<BadInput> cases = {
      {"check --input /nonexistent/rows.txt", "cannot open"},
      {"check --input " + scratch_dir().string(), "directory"},
      {"check --input " + write_file("empty.txt", "").string(), "no rows"},
      {"check --input " + write_file("comments.txt", "# only\n\n").string(), "no rows"},
      {"check --input " + write_file("bad.txt", "1 2 3\n4 5x 6\n").string(), "bad.txt:2:3:"},
      {"check --input " + write_file("huge.txt", "1 1e39\n").string(), "outside the float range"},
      {"check --input " + basic + " --kernel no_such_kernel", "unknown kernel 'no_such_kernel'"},
      {"check --input " + basic + " --eps -1", "--eps"},
      {"check --input " + basic + " --eps nan", "--eps"},
      {"check --input " + basic + " --eps inf", "--eps"},
      {"check --input " + basic + " --eps one", "--eps"},
      {"check --input " + basic + " --op batchnorm", "batchnorm"},
      {"check", "--input"},
      {"frobnicate", "subcommand"},
      {"", "subcommand"},
  };
  for (const BadInput& c : cases) {
    const CliRun run = normcheck(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << "\nstderr: " << run.err;
    EXPECT_TRUE(run.out.empty() || c.args.empty()) << c.args << "\nstdout: " << run.out;
  }
}

// --seed and NORMCHECK_SEED go through one parser (normcheck/seed.h): hex is
// accepted everywhere, and a bad value is a usage error (exit 2) naming it,
// whether given as an option or in the environment.
TEST(Cli, SeedsHaveOneParser) {
  const std::string rows = " --input " + example("shifted_rows.txt");
  const CliRun hex = normcheck("check --json --seed 0x10 --kernel layernorm_fwd.twopass" + rows);
  ASSERT_EQ(hex.exit_code, 0) << hex.err;
  EXPECT_EQ(nlohmann::json::parse(hex.out).at("seed").get<uint64_t>(), 16u);

  const CliRun negative = normcheck("check --seed -3" + rows);
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("bad seed '-3'"), std::string::npos) << negative.err;

  const char* old = std::getenv("NORMCHECK_SEED");
  const std::string saved = old ? old : "";
  ::setenv("NORMCHECK_SEED", "banana", 1);
  const CliRun env = normcheck("claims --only S1");
  if (old) ::setenv("NORMCHECK_SEED", saved.c_str(), 1);
  else ::unsetenv("NORMCHECK_SEED");
  EXPECT_EQ(env.exit_code, 2);
  EXPECT_NE(env.err.find("bad NORMCHECK_SEED 'banana'"), std::string::npos) << env.err;
}

// No input file makes normcheck crash: random bytes, random tokens, and rows
// with NaN/inf all end in exit 0, 1 or 2.
TEST(Cli, NoInputFileCrashesIt) {
  std::mt19937 rng(static_cast<uint32_t>(test::fixed_seed(20261121)));
  const char* tokens[] = {"1", "-0", "nan", "inf", "-inf", "0x1p-149", "3.4e38", "1e-45", ",", " ", "\n", "#", "1e4"};
  for (int i = 0; i < 12; ++i) {
    std::string content;
    const int n = 1 + static_cast<int>(rng() % 200);
    for (int j = 0; j < n; ++j) {
      if (i % 2 == 0) content += static_cast<char>(rng() % 256);
      else content += std::string(tokens[rng() % std::size(tokens)]) + " ";
    }
    const fs::path file = write_file("random" + std::to_string(i) + ".txt", content);
    const CliRun run = normcheck("check --input " + file.string());
    EXPECT_GE(run.exit_code, 0) << "crashed on " << file << "\n" << run.err;
    EXPECT_LE(run.exit_code, 2) << file;
  }
}

}  // namespace
}  // namespace normcheck
