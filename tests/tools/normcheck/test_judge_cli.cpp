// `normcheck gen` and `normcheck judge` end to end, with a harness program
// (judge_harness.cpp) that runs the example plugin's kernels on the files:
// the round trip passes for each example spec; the negative controls are a
// kernel with a wrong rounding (exit 1, y named, a problem file check reads),
// an output file edited to be wrong (exit 1, the edited output named), and
// outputs missing, truncated, of the wrong dtype or shape or without a tensor
// (exit 2, the file and the tensor named). Quantized specs with a numpy
// harness (judge_harness_quant.py): JudgeQuant.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "fold/safetensors.h"
#include "json_schema_subset.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "normcheck_cli.h"
#include "xml_parse.h"

namespace nf = normcheck::fold;
namespace fs = std::filesystem;
using normcheck::test_support::CliRun;
using normcheck::test_support::read_whole_file;
using normcheck::test_support::run_normcheck;
using normcheck::test_support::run_shell;
using normcheck::test_support::scratch_dir;

namespace {

constexpr const char* kLlama = "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16";  // v2_common.h, V2_SPEC_LLAMA

// A fresh directory of `cases` problems of `spec`, seed 7.
fs::path generate(const std::string& name, const std::string& spec, int cases = 12) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  const CliRun run = run_normcheck("gen --spec '" + spec + "' --cases " + std::to_string(cases) + " --seed 7 --out " +
                                   dir.string());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("seed 7"), std::string::npos) << run.out;
  return dir;
}

void harness(const fs::path& dir, const std::string& kernel, const std::string& y_dtype,
             const char* binary = JUDGE_HARNESS) {
  const CliRun run = run_shell(std::string(binary) + " " + dir.string() + " " + kernel + " " + y_dtype);
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

CliRun judge(const fs::path& dir, const std::string& extra = "--json") {
  return run_normcheck("judge " + dir.string() + " " + extra);
}

// A dir whose Llama outputs the correct kernel wrote.
fs::path judged_llama(const std::string& name) {
  const fs::path dir = generate(name, kLlama, 4);
  harness(dir, "rmsnorm.llama", "BF16");
  return dir;
}

fs::path outputs_of(const fs::path& dir, int c) {
  char name[64];
  std::snprintf(name, sizeof name, "case-%03d.outputs.safetensors", c);
  return dir / name;
}

// Exit 2, and stderr names the file and every word of `mentions`.
void expect_bad_input(const fs::path& dir, const fs::path& file, const std::vector<std::string>& mentions) {
  const CliRun run = judge(dir, "");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(file.string()), std::string::npos) << run.err;
  for (const std::string& m : mentions) EXPECT_NE(run.err.find(m), std::string::npos) << m << "\n" << run.err;
  EXPECT_EQ(run.out, "");  // bad input: nothing on stdout (docs/cli.md)
  EXPECT_NE(run.err.find("cases could not be judged"), std::string::npos) << run.err;
}

}  // namespace

TEST(JudgeCli, TheExampleKernelsPassThroughFiles) {
  // each example spec (v2_common.h) with its kernel and y's format
  const struct {
    const char* spec;
    const char* kernel;
    const char* y_dtype;
  } cases[] = {{kLlama, "rmsnorm.llama", "BF16"},
               {"rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma", "rmsnorm.gemma", "BF16"},
               {"rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16", "fused_add_rmsnorm.stored_sum", "BF16"},
               {"layernorm fwd add round=sum:f32", "skip_layernorm", "F32"},
               {"layernorm fwd dtype=bf16 y=f32", "layernorm.mixed", "F32"}};
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kernel);
    const fs::path dir = generate("pass" + std::to_string(i++), c.spec);
    harness(dir, c.kernel, c.y_dtype);
    const CliRun run = judge(dir);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto doc = nlohmann::json::parse(run.out);
    EXPECT_EQ(doc.at("passed"), 12);
    for (const auto& k : doc.at("cases")) {
      EXPECT_EQ(k.at("verdict"), "pass") << k.dump();
      EXPECT_EQ(k.at("spec"), normcheck::to_text(*normcheck::parse_spec(c.spec).spec));
      EXPECT_EQ(k.at("seed"), 7);
    }
  }
}

TEST(JudgeCli, AKernelThatRoundsOnceTooFewIsAFindingWithAProblemFile) {
  const fs::path dir = generate("broken", kLlama, 24);
  harness(dir, "broken.llama_rounds_once", "BF16", JUDGE_HARNESS_BROKEN);
  const CliRun run = judge(dir);
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_GT(doc.at("findings").get<int>(), 0);
  for (const auto& k : doc.at("cases")) {
    if (k.at("verdict") != "fail") continue;
    EXPECT_EQ(k.at("worst").at("output"), "y");
    EXPECT_GT(k.at("max_error_over_bound").get<double>(), 1.0);
    // the problem file is one `normcheck check` reads: the spec, the harness's inputs
    const auto file = normcheck::read_problem_file(k.at("problem_file").get<std::string>());
    ASSERT_TRUE(file.spec);
    EXPECT_EQ(normcheck::to_text(*file.spec), kLlama);
    EXPECT_EQ(file.op, normcheck::Op::rmsnorm_fwd);
  }
  const CliRun text = judge(dir, "");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("FAIL"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("y[row "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("allowed error"), std::string::npos) << text.out;

  // the correct kernel's outputs over the same files: every case passes, no finding file is left
  harness(dir, "rmsnorm.llama", "BF16");
  EXPECT_EQ(judge(dir, "").exit_code, 0);
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".finding.txt"), std::string::npos) << e.path();
}

TEST(JudgeCli, AnEditedOutputIsCaughtAndNamed) {
  const fs::path dir = judged_llama("edited");
  nf::TensorFile out = nf::read_safetensors(outputs_of(dir, 2));
  nf::Tensor* rrms = out.find("rrms");
  ASSERT_NE(rrms, nullptr);
  std::vector<double> v = nf::tensor_values(*rrms);
  v[0] *= 2;  // twice the statistic: far outside float32's rounding of it
  nf::set_tensor_values(*rrms, v);
  nf::write_safetensors(outputs_of(dir, 2), out);
  const CliRun run = judge(dir);
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("findings"), 1);
  EXPECT_EQ(doc.at("cases").at(2).at("verdict"), "fail");
  EXPECT_EQ(doc.at("cases").at(2).at("worst").at("output"), "rrms");
  EXPECT_EQ(doc.at("cases").at(2).at("worst").at("row"), 0);
}

TEST(JudgeCli, MissingOrTruncatedOutputsAreBadInputNamingTheFileAndTheTensor) {
  const fs::path dir = judged_llama("missing");
  fs::remove(outputs_of(dir, 1));
  expect_bad_input(dir, outputs_of(dir, 1), {"no such file", "y (BF16", "rrms (F32"});

  const fs::path cut = judged_llama("truncated");
  const std::string bytes = read_whole_file(outputs_of(cut, 0));
  std::ofstream(outputs_of(cut, 0), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 2);
  expect_bad_input(cut, outputs_of(cut, 0), {"truncated", "'rrms'"});
}

TEST(JudgeCli, AWrongDtypeShapeOrTensorSetIsBadInput) {
  const auto edit = [](const std::string& name, auto change) {
    const fs::path dir = judged_llama(name);
    nf::TensorFile out = nf::read_safetensors(outputs_of(dir, 3));
    change(out);
    nf::write_safetensors(outputs_of(dir, 3), out);
    return dir;
  };
  const fs::path dtype = edit("dtype", [](nf::TensorFile& f) {
    nf::Tensor& y = *f.find("y");
    const std::vector<double> v = nf::tensor_values(y);
    y.dtype = "F32";
    nf::set_tensor_values(y, v);
  });
  expect_bad_input(dtype, outputs_of(dtype, 3), {"'y' is F32, the spec says BF16"});

  const fs::path shape = edit("shape", [](nf::TensorFile& f) {
    nf::Tensor& y = *f.find("y");
    y.shape = {y.shape[0] * y.shape[1]};
  });
  expect_bad_input(shape, outputs_of(shape, 3), {"'y' has shape", "expected ["});

  const fs::path dropped = edit("dropped", [](nf::TensorFile& f) { f.tensors.pop_back(); });
  expect_bad_input(dropped, outputs_of(dropped, 3), {"no tensor 'rrms'"});

  // a tensor the spec does not have (LayerNorm's name of the statistic) beside the right ones
  const fs::path extra = edit("extra", [](nf::TensorFile& f) {
    nf::Tensor rstd = *f.find("rrms");
    rstd.name = "rstd";
    f.tensors.push_back(rstd);
  });
  expect_bad_input(extra, outputs_of(extra, 3), {"'rstd' is not one of the spec's"});
}

TEST(JudgeCli, GenDrawsFromItsSeedAndRefusesWhatItCannotWrite) {
  const fs::path a = generate("seed_a", kLlama, 3), b = generate("seed_b", kLlama, 3);
  EXPECT_EQ(read_whole_file(a / "case-002.inputs.safetensors"), read_whole_file(b / "case-002.inputs.safetensors"));
  const nf::TensorFile in = nf::read_safetensors(a / "case-002.inputs.safetensors");
  EXPECT_EQ(in.metadata.at("normcheck.seed"), "7");
  EXPECT_EQ(in.metadata.at("normcheck.spec"), kLlama);
  EXPECT_EQ(in.find("x")->dtype, "BF16");
  EXPECT_EQ(in.find("gamma")->dtype, "BF16");
  // NORMCHECK_SEED when --seed is not given; another seed, other problems
  const fs::path c = scratch_dir() / "seed_env";
  const CliRun env = run_shell("NORMCHECK_SEED=8 " + std::string(NORMCHECK_BINARY) + " gen --spec '" + kLlama +
                               "' --cases 3 --out " + c.string());
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.out.find("seed 8"), std::string::npos) << env.out;
  EXPECT_NE(read_whole_file(a / "case-002.inputs.safetensors"), read_whole_file(c / "case-002.inputs.safetensors"));

  // the largest seed travels through the metadata to the judge
  const fs::path top = scratch_dir() / "seed_top";
  ASSERT_EQ(run_normcheck("gen --spec '" + std::string(kLlama) + "' --cases 2 --seed 18446744073709551615 --out " +
                          top.string()).exit_code, 0);
  harness(top, "rmsnorm.llama", "BF16");
  const CliRun judged = judge(top);
  ASSERT_EQ(judged.exit_code, 0) << judged.err;
  EXPECT_EQ(nlohmann::json::parse(judged.out).at("cases").at(0).at("seed").get<uint64_t>(), 18446744073709551615ull);

  // a directory with cases already: outputs of other problems must not be judged
  EXPECT_EQ(run_normcheck("gen --spec '" + std::string(kLlama) + "' --out " + a.string()).exit_code, 2);
  const CliRun linear = run_normcheck("gen --spec 'rmsnorm fwd linear' --out " + (scratch_dir() / "linear").string());
  EXPECT_EQ(linear.exit_code, 2);
  EXPECT_NE(linear.err.find("Linear"), std::string::npos) << linear.err;
  EXPECT_EQ(run_normcheck("gen --spec 'rmsnorm fwd dtype=f8' --out " + (scratch_dir() / "f8").string()).exit_code, 2);
  fs::create_directories(scratch_dir() / "empty");
  EXPECT_EQ(judge(scratch_dir() / "empty", "").exit_code, 2);
  EXPECT_EQ(judge(scratch_dir() / "no_such_dir", "").exit_code, 2);
}

// eps is also a tensor of every inputs file (F32 [1], for a harness without a
// hex-float parser), the same float as the metadata's; an inputs file whose
// two differ was changed after gen wrote it (bad input), and one without the
// tensor is judged from the metadata.
TEST(JudgeCli, EpsIsAlsoAnF32TensorTheSameAsTheMetadata) {
  const fs::path dir = judged_llama("eps_tensor");
  const fs::path inputs = dir / "case-003.inputs.safetensors";
  nf::TensorFile in = nf::read_safetensors(inputs);
  const nf::Tensor* eps = in.find("eps");
  ASSERT_NE(eps, nullptr);
  EXPECT_EQ(eps->dtype, "F32");
  EXPECT_EQ(eps->shape, std::vector<int64_t>{1});
  const float meta = normcheck::parse_float_token(in.metadata.at("normcheck.eps"));
  EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(nf::tensor_values(*eps).at(0))), std::bit_cast<uint32_t>(meta));
  ASSERT_EQ(judge(dir).exit_code, 0);

  nf::set_tensor_values(*in.find("eps"), {static_cast<double>(meta) * 2 + 1e-3});
  nf::write_safetensors(inputs, in);
  expect_bad_input(dir, inputs, {"tensor 'eps'", "normcheck.eps"});

  std::erase_if(in.tensors, [](const nf::Tensor& t) { return t.name == "eps"; });
  nf::write_safetensors(inputs, in);
  const CliRun without = judge(dir);
  EXPECT_EQ(without.exit_code, 0) << without.out << without.err;
}

// A statistic per row is read as [rows] or [rows, 1] (ONNX's Mean and
// InvStdDev keep the reduced axis); [1, rows] is still a wrong shape.
TEST(JudgeCli, StatisticsShapedAsAColumnAreRead) {
  const fs::path column = scratch_dir() / "stat_column";  // three rows: [1, rows] is not [rows, 1]
  fs::remove_all(column);
  const CliRun gen = run_normcheck("gen --spec '" + std::string(kLlama) + "' --cases 2 --seed 7 --shape 3x64 --out " +
                                   column.string());
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  harness(column, "rmsnorm.llama", "BF16");
  const fs::path out = outputs_of(column, 1);
  nf::TensorFile f = nf::read_safetensors(out);
  nf::Tensor& rrms = *f.find("rrms");
  const int64_t rows = rrms.shape.at(0);
  rrms.shape = {rows, 1};
  nf::write_safetensors(out, f);
  const CliRun run = judge(column);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  rrms.shape = {1, rows};
  nf::write_safetensors(out, f);
  expect_bad_input(column, out, {"'rrms' has shape", "or [" + std::to_string(rows) + ", 1]"});
}

// f16 holds |x| <= 65504: gen says that an x drawn past it is stored as inf
// when the domain reaches past it, and says nothing when it does not.
TEST(JudgeCli, GenSaysWhenF16CasesHoldAnInf) {
  const fs::path wide = scratch_dir() / "f16_wide", narrow = scratch_dir() / "f16_narrow";
  fs::remove_all(wide), fs::remove_all(narrow);
  const std::string spec = "gen --spec 'rmsnorm fwd dtype=f16 gamma=f16' --cases 40 --seed 3 --out ";
  const CliRun a = run_normcheck(spec + wide.string());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("stored as inf"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("--domain \"|x|<=65504\""), std::string::npos) << a.out;
  const CliRun b = run_normcheck(spec + narrow.string() + " --domain '|x|<=65504'");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out.find("stored as inf"), std::string::npos) << b.out;
}

// --shape RxC (repeatable): every problem is one of the shapes given; a shape
// whose d is outside the domain, or that is not RxC, is bad usage.
TEST(JudgeCli, GenDrawsAtTheShapesGiven) {
  const fs::path dir = scratch_dir() / "shapes";
  fs::remove_all(dir);
  const CliRun run = run_normcheck("gen --spec '" + std::string(kLlama) + "' --cases 8 --seed 7 --shape 3x17 --shape 2x5 --out " +
                                   dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::set<std::vector<int64_t>> shapes;
  for (int c = 0; c < 8; ++c) {
    char name[40];
    std::snprintf(name, sizeof name, "case-%03d.inputs.safetensors", c);
    shapes.insert(nf::read_safetensors(dir / name).find("x")->shape);
  }
  EXPECT_EQ(shapes, (std::set<std::vector<int64_t>>{{3, 17}, {2, 5}}));
  const CliRun outside = run_normcheck("gen --spec '" + std::string(kLlama) + "' --domain 'd<=8' --shape 2x16 --out " +
                                       (scratch_dir() / "shapes_outside").string());
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("outside the domain d<=8"), std::string::npos) << outside.err;
  EXPECT_EQ(run_normcheck("gen --spec '" + std::string(kLlama) + "' --shape 3by17 --out " +
                          (scratch_dir() / "shapes_bad").string()).exit_code, 2);
}

// The harness in Python (judge_harness.py: numpy alone, Gemma's RMSNorm):
// its outputs pass, and the same harness with a bf16 conversion that
// truncates is caught. Skipped where Debian's python3 has no numpy
// (scripts/setup.sh installs python3-numpy).
TEST(JudgeCli, APythonHarnessPassesAndItsTruncationIsCaught) {
  if (run_shell("/usr/bin/python3 -c 'import numpy'").exit_code != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no numpy: install python3-numpy (scripts/setup.sh) to run this test";
  const std::string spec = "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma";
  const std::string script = std::string(NORMCHECK_SOURCE_DIR) + "/tests/tools/normcheck/judge_harness.py";
  const fs::path good = generate("python", spec, 24);
  const CliRun ran = run_shell("/usr/bin/python3 " + script + " " + good.string());
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const CliRun pass = judge(good);
  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;

  const fs::path bad = generate("python_truncate", spec, 24);
  ASSERT_EQ(run_shell("/usr/bin/python3 " + script + " " + bad.string() + " --truncate").exit_code, 0);
  const CliRun fail = judge(bad);
  ASSERT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  const nlohmann::json verdicts = nlohmann::json::parse(fail.out);  // alive for the loop: at() refers into it
  for (const auto& k : verdicts.at("cases")) {
    if (k.at("verdict") != "fail") continue;
    EXPECT_EQ(k.at("worst").at("output"), "y") << k.dump();
  }
}

// Backward specs through files (protocol version 2), with a numpy harness
// (judge_harness_bwd.py) that computes the backward in float32 from the
// saved statistics gen wrote: it passes on a LayerNorm and on a fused add +
// Gemma RMSNorm with bf16 statistics and dgamma; its twin that multiplies dy
// by gamma where the spec says 1 + gamma is caught on dx; on 4096 rows its
// twin that keeps dgamma and dbeta's running sums in bf16 is caught on them,
// and the finding replays with `normcheck check` on a table kernel of the
// spec. Skipped where Debian's python3 has no numpy.
namespace {

constexpr const char* kGemmaAddBwd = "rmsnorm bwd dtype=bf16 gamma=bf16 rrms=bf16 dgamma=bf16 add weight=1+gamma";

fs::path generate_bwd(const std::string& name, const std::string& spec, const std::string& extra) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  const CliRun run = run_normcheck("gen --spec '" + spec + "' --seed 7 " + extra + " --out " + dir.string());
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  return dir;
}

void bwd_harness(const fs::path& dir, const std::string& broken = "") {
  const CliRun run = run_shell("/usr/bin/python3 " + std::string(NORMCHECK_SOURCE_DIR) +
                               "/tests/tools/normcheck/judge_harness_bwd.py " + dir.string() +
                               (broken.empty() ? "" : " --broken " + broken));
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

// The outputs named worst in the failing cases of judge --json's `doc`.
std::set<std::string> failing_outputs(const nlohmann::json& doc) {
  std::set<std::string> out;
  for (const auto& k : doc.at("cases"))
    if (k.at("verdict") == "fail") out.insert(k.at("worst").at("output").get<std::string>());
  return out;
}

}  // namespace

TEST(JudgeBackward, GenWritesTheInputsAKernelIsGiven) {
  const fs::path dir = generate_bwd("bwd_files", kGemmaAddBwd, "--cases 3");
  const nf::TensorFile in = nf::read_safetensors(dir / "case-002.inputs.safetensors");
  EXPECT_EQ(in.metadata.at("normcheck.protocol"), "2");
  std::vector<std::string> names;
  for (const nf::Tensor& t : in.tensors) names.push_back(t.name + " " + t.dtype);
  EXPECT_EQ(names, (std::vector<std::string>{"dy BF16", "x BF16", "dresidual BF16", "gamma BF16", "rrms BF16", "eps F32"}));
  EXPECT_EQ(in.find("rrms")->shape, std::vector<int64_t>{in.find("x")->shape[0]});
  // from=y: y and beta for the kernel, and x for the judge's reference
  const fs::path from_y = generate_bwd("bwd_from_y", "layernorm bwd dtype=bf16 gamma=bf16 from=y", "--cases 2");
  const nf::TensorFile y = nf::read_safetensors(from_y / "case-001.inputs.safetensors");
  names.clear();
  for (const nf::Tensor& t : y.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dy", "y", "beta", "gamma", "rstd", "x", "eps"}));
}

TEST(JudgeBackward, ANumpyBackwardPassesAndForgetting1PlusGammaIsCaught) {
  if (run_shell("/usr/bin/python3 -c 'import numpy'").exit_code != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no numpy: install python3-numpy (scripts/setup.sh) to run this test";
  for (const std::string& spec : {std::string("layernorm bwd"), std::string(kGemmaAddBwd)}) {
    SCOPED_TRACE(spec);
    const fs::path dir = generate_bwd("bwd_pass", spec, "--cases 24");
    bwd_harness(dir);
    const CliRun run = judge(dir);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out).at("passed"), 24);
  }
  const fs::path dir = generate_bwd("bwd_one_plus", kGemmaAddBwd, "--cases 24");
  bwd_harness(dir, "forgot_one_plus_gamma");
  const CliRun run = judge(dir);
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::set<std::string> worst = failing_outputs(nlohmann::json::parse(run.out));
  EXPECT_TRUE(worst.count("dx") || worst.count("dresidual")) << run.out;
}

TEST(JudgeBackward, DgammaSummedInBf16OverThousandsOfRowsIsCaughtAndReplays) {
  if (run_shell("/usr/bin/python3 -c 'import numpy'").exit_code != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no numpy: install python3-numpy (scripts/setup.sh) to run this test";
  // finite inputs: a NaN in a column makes its exact sum NaN, which hides nothing
  const std::string rows = "--cases 4 --shape 4096x8 --domain finite";
  const fs::path good = generate_bwd("bwd_rows", "layernorm bwd", rows);
  bwd_harness(good);
  const CliRun pass = judge(good);
  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;

  const fs::path bad = generate_bwd("bwd_rows_bf16", "layernorm bwd", rows);
  bwd_harness(bad, "dgamma_bf16_sum");
  const CliRun fail = judge(bad);
  ASSERT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  const nlohmann::json doc = nlohmann::json::parse(fail.out);
  for (const std::string& output : failing_outputs(doc)) EXPECT_TRUE(output == "dgamma" || output == "dbeta") << output;
  std::string finding;
  for (const auto& k : doc.at("cases"))
    if (k.at("verdict") == "fail") finding = k.at("problem_file").get<std::string>();
  ASSERT_FALSE(finding.empty());
  // the problem file is the case as a kernel of the spec is given it: a table kernel replays it and passes
  const CliRun replay = run_normcheck("check --input " + finding + " --kernel layernorm_bwd.twopass");
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("layernorm_bwd.twopass"), std::string::npos) << replay.out;
}

// A backward's inputs file whose saved statistic is not normcheck's, an
// outputs file without dgamma or with dx in another format, and a backward
// case marked protocol version 1: bad input naming the file and the tensor.
TEST(JudgeBackward, BadFilesAreRefusedNamingTheFileAndTheTensor) {
  const auto prepared = [](const std::string& name) {
    const fs::path dir = generate_bwd(name, kGemmaAddBwd, "--cases 4");
    for (int c = 0; c < 4; ++c) {  // outputs of the right names, dtypes and shapes (values not judged here)
      char file[64];
      std::snprintf(file, sizeof file, "case-%03d.inputs.safetensors", c);
      const nf::TensorFile in = nf::read_safetensors(dir / file);
      nf::TensorFile out;
      for (const char* t : {"dx", "dresidual"}) {
        nf::Tensor v = *in.find("dy");
        v.name = t;
        out.tensors.push_back(v);
      }
      nf::Tensor g = *in.find("gamma");
      g.name = "dgamma";
      out.tensors.push_back(g);
      nf::write_safetensors(outputs_of(dir, c), out);
    }
    return dir;
  };
  const fs::path stat = prepared("bwd_bad_stat");
  const fs::path stat_in = stat / "case-001.inputs.safetensors";
  nf::TensorFile in = nf::read_safetensors(stat_in);
  in.find("rrms")->bytes[0] ^= 1;
  nf::write_safetensors(stat_in, in);
  expect_bad_input(stat, stat_in, {"tensor 'rrms' differs at element 0"});

  const fs::path version = prepared("bwd_bad_version");
  const fs::path version_in = version / "case-002.inputs.safetensors";
  in = nf::read_safetensors(version_in);
  in.metadata["normcheck.protocol"] = "1";
  nf::write_safetensors(version_in, in);
  expect_bad_input(version, version_in, {"protocol version 1 has no backward specs"});

  const fs::path dropped = prepared("bwd_no_dgamma");
  nf::TensorFile out = nf::read_safetensors(outputs_of(dropped, 3));
  out.tensors.pop_back();
  nf::write_safetensors(outputs_of(dropped, 3), out);
  expect_bad_input(dropped, outputs_of(dropped, 3), {"no tensor 'dgamma'"});

  const fs::path dtype = prepared("bwd_dx_f32");
  out = nf::read_safetensors(outputs_of(dtype, 0));
  nf::Tensor& dx = *out.find("dx");
  const std::vector<double> v = nf::tensor_values(dx);
  dx.dtype = "F32";
  nf::set_tensor_values(dx, v);
  nf::write_safetensors(outputs_of(dtype, 0), out);
  expect_bad_input(dtype, outputs_of(dtype, 0), {"'dx' is F32, the spec says BF16"});
}

// A malformed inputs file is bad input naming it and what is wrong: a spec
// that is not one, an eps that is not a number, a missing key, an x of the
// wrong dtype.
TEST(JudgeCli, AMalformedInputsFileIsBadInputNamingWhatIsWrong) {
  const struct {
    const char* name;
    void (*change)(nf::TensorFile&);
    const char* mention;
  } edits[] = {
      {"spec", [](nf::TensorFile& f) { f.metadata["normcheck.spec"] = "rmsnorm sideways"; }, "'normcheck.spec' is not a spec"},
      {"eps", [](nf::TensorFile& f) { f.metadata["normcheck.eps"] = "small"; }, "'normcheck.eps'"},
      {"key", [](nf::TensorFile& f) { f.metadata.erase("normcheck.rows"); }, "no __metadata__ entry 'normcheck.rows'"},
      {"x", [](nf::TensorFile& f) {
         nf::Tensor& x = *f.find("x");
         const std::vector<double> v = nf::tensor_values(x);
         x.dtype = "F16";
         nf::set_tensor_values(x, v);
       }, "'x' is F16, the spec says BF16"},
  };
  for (const auto& e : edits) {
    SCOPED_TRACE(e.name);
    const fs::path dir = judged_llama(std::string("inputs_") + e.name);
    const fs::path inputs = dir / "case-001.inputs.safetensors";
    nf::TensorFile in = nf::read_safetensors(inputs);
    e.change(in);
    nf::write_safetensors(inputs, in);
    expect_bad_input(dir, inputs, {e.mention});
  }
}

// Whatever bytes an outputs file holds, judge gives a verdict or exit 2 with
// a message, never a crash: each byte of a good file's header and first data
// set to 0x00, 0xff and '"' in turn.
TEST(JudgeCli, CorruptOutputsNeverCrashTheJudge) {
  const fs::path dir = judged_llama("corrupt");
  const fs::path file = outputs_of(dir, 2);
  const std::string good = read_whole_file(file);
  const std::size_t end = std::min<std::size_t>(good.size(), 200);
  int bad_input = 0;
  for (std::size_t at = 0; at < end; at += 3)
    for (const char byte : {'\0', '\xff', '"'}) {
      std::string bytes = good;
      bytes[at] = byte;
      std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
      const CliRun run = judge(dir, "");
      ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1 || run.exit_code == 2)
          << "byte " << at << " = " << int(byte) << ": exit " << run.exit_code << "\n" << run.err;
      if (run.exit_code == 2) {
        ++bad_input;
        EXPECT_NE(run.err.find(file.string()), std::string::npos) << run.err;
      }
    }
  EXPECT_GT(bad_input, 0);  // most header edits break the file
}

// Quantized specs (docs/judge.md, "Quantized specs") with judge_harness_quant.py,
// numpy alone: a static-scale fp8 and a per-token int8 RMSNorm (vLLM's
// rms_norm_static_fp8_quant and rms_norm_dynamic_per_token_quant on float32
// activations) pass; its twins that clamp int8 at -127 or round int8 ties
// away from zero are caught on y; a y of the wrong dtype or width, a missing
// or misshapen dynamic scale, a static scale that is not one, are bad input.
// Skipped where Debian's python3 has no numpy.
namespace {

constexpr const char* kStaticFp8 = "rmsnorm fwd y=f32 quant=e4m3 scale=static";
// int8 has no NaN: the harness writes 0 for a NaN t (nan_to_num), which the specs declare
constexpr const char* kTokenInt8 = "rmsnorm fwd quant=int8 scale=token nan=clamp";
constexpr const char* kStaticInt8 = "rmsnorm fwd quant=int8 scale=static nan=clamp";

bool has_numpy() { return run_shell("/usr/bin/python3 -c 'import numpy'").exit_code == 0; }

void quant_harness(const fs::path& dir, const std::string& args = "") {
  const CliRun ran = run_shell("/usr/bin/python3 " + std::string(NORMCHECK_SOURCE_DIR) +
                               "/tests/tools/normcheck/judge_harness_quant.py " + dir.string() + " " + args);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
}

fs::path inputs_of(const fs::path& dir, int c) {
  char name[64];
  std::snprintf(name, sizeof name, "case-%03d.inputs.safetensors", c);
  return dir / name;
}

// The judged cases that failed, from judge --json (exit 1 expected).
std::vector<nlohmann::json> failed_cases(const fs::path& dir) {
  const CliRun run = judge(dir);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  std::vector<nlohmann::json> out;
  if (run.exit_code != 1) return out;
  const nlohmann::json doc = nlohmann::json::parse(run.out);  // alive for the loop: at() refers into it
  for (const auto& c : doc.at("cases"))
    if (c.at("verdict") == "fail") out.push_back(c);
  return out;
}

}  // namespace

TEST(JudgeQuant, AStaticFp8AndAPerTokenInt8RmsNormPass) {
  if (!has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy, scripts/setup.sh)";
  const fs::path fp8 = generate("quant_fp8", kStaticFp8, 101), int8 = generate("quant_int8", kTokenInt8, 101);
  // the static scale is an input tensor, F32 [1], > 0; a dynamic one is not in the inputs
  const nf::TensorFile in = nf::read_safetensors(inputs_of(fp8, 5));
  ASSERT_NE(in.find("scale"), nullptr);
  EXPECT_EQ(in.find("scale")->dtype, "F32");
  EXPECT_EQ(in.find("scale")->shape, std::vector<int64_t>{1});
  EXPECT_GT(nf::tensor_values(*in.find("scale"))[0], 0);
  EXPECT_EQ(nf::read_safetensors(inputs_of(int8, 5)).find("scale"), nullptr);
  for (const fs::path& dir : {fp8, int8}) {
    quant_harness(dir);
    const CliRun run = judge(dir);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  }
  // fp8 codes under safetensors' own dtype name of the format are read too
  nf::TensorFile out = nf::read_safetensors(outputs_of(fp8, 3));
  out.find("y")->dtype = "F8_E4M3";
  nf::write_safetensors(outputs_of(fp8, 3), out);
  EXPECT_EQ(judge(fp8).exit_code, 0);
  // a y whose codes are not the function's: every code of case 3 one up (away
  // from zero; +-448 and NaN kept)
  for (char& b : out.find("y")->bytes)
    if ((static_cast<unsigned char>(b) & 0x7f) < 0x7e) b = static_cast<char>(b + 1);
  nf::write_safetensors(outputs_of(fp8, 3), out);
  const std::vector<nlohmann::json> failed = failed_cases(fp8);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("case"), "case-003");
  EXPECT_EQ(failed[0].at("label"), "quantization");
  EXPECT_EQ(failed[0].at("worst").at("output"), "y");
  // the recorded dynamic scale is the one judged: case 3's, doubled, is outside its range
  nf::TensorFile dyn = nf::read_safetensors(outputs_of(int8, 3));
  std::vector<double> s = nf::tensor_values(*dyn.find("scale"));
  for (double& v : s) v *= 2;
  nf::set_tensor_values(*dyn.find("scale"), s);
  nf::write_safetensors(outputs_of(int8, 3), dyn);
  const std::vector<nlohmann::json> doubled = failed_cases(int8);
  ASSERT_EQ(doubled.size(), 1u);
  EXPECT_EQ(doubled[0].at("case"), "case-003");
  EXPECT_EQ(doubled[0].at("label"), "quantization");
  EXPECT_EQ(doubled[0].at("worst").at("output"), "scale");
}

// TransformerEngine's convention: the scale multiplies, scale_inv and the
// tensor's amax are outputs, F32 [1]. The harness passes; an outputs file
// without scale_inv is bad input; an amax taken with np.nanmax, which
// passes over the NaN y of a row with a non-finite x, is `nan`.
TEST(JudgeQuant, TransformerEnginesScaleInvAndAmaxAreOutputs) {
  if (!has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy, scripts/setup.sh)";
  const fs::path dir =
      generate("quant_te", "rmsnorm fwd y=f32 quant=e4m3 scale=static scale_apply=multiply amax", 101);
  quant_harness(dir);
  EXPECT_EQ(judge(dir).exit_code, 0);
  quant_harness(dir, "--amax-nanmax");
  const std::vector<nlohmann::json> failed = failed_cases(dir);
  ASSERT_FALSE(failed.empty());
  for (const auto& c : failed) {
    EXPECT_EQ(c.at("label"), "nan");
    EXPECT_EQ(c.at("worst").at("output"), "amax");
  }
  nf::TensorFile out = nf::read_safetensors(outputs_of(dir, 0));
  std::erase_if(out.tensors, [](const nf::Tensor& t) { return t.name == "scale_inv"; });
  nf::write_safetensors(outputs_of(dir, 0), out);
  const CliRun missing = judge(dir);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("scale_inv"), std::string::npos) << missing.err;
}

// qmin=-128 declared, the twin clamps at -127: on the generator's static
// scales that saturate (t below -127.5) its code is -127 where -128 is due.
// The same files pass with the correct harness first, and the finding's
// problem file carries the inputs' scale (nc.scale) for a replay.
TEST(JudgeQuant, AnInt8ClampAtMinus127IsAQuantizationFinding) {
  if (!has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy, scripts/setup.sh)";
  const fs::path dir = generate("quant_clamp", kStaticInt8, 101);
  quant_harness(dir);
  ASSERT_EQ(judge(dir).exit_code, 0);
  quant_harness(dir, "--clamp-127");
  const std::vector<nlohmann::json> failed = failed_cases(dir);
  ASSERT_FALSE(failed.empty());
  for (const auto& c : failed) {
    EXPECT_EQ(c.at("label"), "quantization") << c.dump();
    EXPECT_EQ(c.at("worst").at("output"), "y") << c.dump();
    EXPECT_EQ(c.at("worst").at("computed"), -127) << c.dump();
    EXPECT_LT(c.at("worst").at("exact").get<double>(), -127.5) << c.dump();  // exact math's y / s: -128 is due
  }
  const auto file = normcheck::read_problem_file(failed[0].at("problem_file").get<std::string>());
  ASSERT_EQ(file.problems.size(), 1u);
  const int index = std::stoi(failed[0].at("case").get<std::string>().substr(5));
  const nf::TensorFile in = nf::read_safetensors(inputs_of(dir, index));
  EXPECT_EQ(file.problems[0].scale, static_cast<float>(nf::tensor_values(*in.find("scale"))[0]));
  EXPECT_EQ(normcheck::to_text(*file.spec), kStaticInt8);
  // the finding replays on a plugin's kernels of the spec (quant_plugin.c): its
  // twin that clamps at -127 has the finding again, the correct kernel passes
  const std::string replay = "check --input " + failed[0].at("problem_file").get<std::string>() + " --plugin " +
                             JUDGE_QUANT_PLUGIN + " --kernel ";
  const CliRun twin = run_normcheck(replay + "quant.int8_static_clamp127");
  EXPECT_EQ(twin.exit_code, 1) << twin.out << twin.err;
  EXPECT_NE(twin.out.find("quantization"), std::string::npos) << twin.out;
  const CliRun correct = run_normcheck(replay + "quant.int8_static");
  EXPECT_EQ(correct.exit_code, 0) << correct.out << correct.err;
}

// Ties: y in bf16 (8 significant bits) over a power-of-two scale makes
// y / s land on k + 1/2 for many y in [64 s, 128 s). gen's scales are not
// powers of two, so the test rounds each inputs file's scale down to one
// (the judge judges the scale the file holds). The correct harness passes
// these files; its twin differs from it only where a tie is rounded away
// from zero, and is caught on y with the code one from the tie's even code:
// a quantization finding whose detail names the cast its codes follow
// (ties=away), before a candidate rounding policy (y cast from float32, whose
// range spans the tie) is tried.
TEST(JudgeQuant, Int8TiesAwayFromZeroAreCaughtOnAPowerOfTwoScale) {
  if (!has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy, scripts/setup.sh)";
  const fs::path dir =
      generate("quant_ties", "rmsnorm fwd dtype=bf16 gamma=bf16 quant=int8 scale=static nan=clamp", 101);
  for (int c = 0; c < 101; ++c) {
    nf::TensorFile in = nf::read_safetensors(inputs_of(dir, c));
    nf::Tensor& scale = *in.find("scale");
    nf::set_tensor_values(scale, {std::exp2(std::floor(std::log2(nf::tensor_values(scale)[0])))});
    nf::write_safetensors(inputs_of(dir, c), in);
  }
  quant_harness(dir);
  ASSERT_EQ(judge(dir).exit_code, 0);
  quant_harness(dir, "--ties-away");
  const std::vector<nlohmann::json> failed = failed_cases(dir);
  ASSERT_FALSE(failed.empty());
  for (const auto& c : failed) {
    EXPECT_EQ(c.at("label"), "quantization") << c.dump();
    EXPECT_NE(c.dump().find("ties=away"), std::string::npos) << c.dump();
    EXPECT_EQ(c.at("worst").at("output"), "y") << c.dump();
    const double code = c.at("worst").at("computed"), exact = c.at("worst").at("exact");
    EXPECT_LT(std::fabs(code - exact), 1.5) << c.dump();  // a neighbour of exact math's value, not a wild code
    EXPECT_GE(std::fabs(code), std::fabs(exact)) << c.dump();  // away from zero
  }
}

TEST(JudgeQuant, AMistypedOrTruncatedYOrABadScaleIsBadInput) {
  if (!has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy (python3-numpy, scripts/setup.sh)";
  const fs::path f32 = generate("quant_f32", kStaticFp8, 4);
  quant_harness(f32, "--y-dtype F32");
  expect_bad_input(f32, outputs_of(f32, 0), {"'y' is F32, the spec says U8 or F8_E4M3"});
  const fs::path signed_fp8 = generate("quant_i8_for_fp8", kStaticFp8, 4);
  quant_harness(signed_fp8, "--y-dtype I8");
  expect_bad_input(signed_fp8, outputs_of(signed_fp8, 0), {"'y' is I8, the spec says U8 or F8_E4M3"});
  const fs::path unsigned_int8 = generate("quant_u8_for_int8", kTokenInt8, 4);
  quant_harness(unsigned_int8, "--y-dtype U8");
  expect_bad_input(unsigned_int8, outputs_of(unsigned_int8, 0), {"'y' is U8, the spec says I8"});
  const fs::path narrow = generate("quant_narrow", kTokenInt8, 4);
  quant_harness(narrow, "--y-cols 0");
  expect_bad_input(narrow, outputs_of(narrow, 0), {"'y' has shape", "expected ["});

  // a truncated outputs file: its last tensor (the dynamic scale) cut short
  const fs::path cut = generate("quant_cut", kTokenInt8, 4);
  quant_harness(cut);
  const std::string bytes = read_whole_file(outputs_of(cut, 1));
  std::ofstream(outputs_of(cut, 1), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 2);
  expect_bad_input(cut, outputs_of(cut, 1), {"truncated", "'scale'"});

  // the dynamic scale missing, or [rows] where [rows, 1] is due
  const fs::path scale = generate("quant_scale", kTokenInt8, 4);
  quant_harness(scale);
  nf::TensorFile out = nf::read_safetensors(outputs_of(scale, 2));
  nf::Tensor s = *out.find("scale");
  out.tensors.pop_back();
  nf::write_safetensors(outputs_of(scale, 2), out);
  expect_bad_input(scale, outputs_of(scale, 2), {"no tensor 'scale'"});
  s.shape = {s.shape[0]};
  out.tensors.push_back(s);
  nf::write_safetensors(outputs_of(scale, 2), out);
  expect_bad_input(scale, outputs_of(scale, 2), {"'scale' has shape", "expected ["});

  // a static scale of 0 in the inputs, or a static scale missing from them
  const fs::path zero = generate("quant_zero_scale", kStaticFp8, 4);
  quant_harness(zero);
  nf::TensorFile in = nf::read_safetensors(inputs_of(zero, 1));
  nf::set_tensor_values(*in.find("scale"), {0.0});
  nf::write_safetensors(inputs_of(zero, 1), in);
  expect_bad_input(zero, inputs_of(zero, 1), {"'scale'", "finite and > 0"});
  std::erase_if(in.tensors, [](const nf::Tensor& t) { return t.name == "scale"; });
  nf::write_safetensors(inputs_of(zero, 1), in);
  expect_bad_input(zero, inputs_of(zero, 1), {"no tensor 'scale'"});
}

// The harness in PyTorch (judge_harness_torch.py): F.layer_norm in float32
// and bf16 and Hugging Face's LlamaRMSNorm pass; their broken twins (eps left
// out; Llama's y rounded once) are caught with y named; a truncated outputs
// file of the harness is exit 2 naming the file and the tensor. Built in when
// /usr/bin/python3 imports torch at configure time (CMakeLists.txt).
#ifdef JUDGE_TORCH_HARNESS
namespace {

fs::path torch_harness(const std::string& name, const std::string& spec, const std::string& kernel) {
  const fs::path dir = generate(name, spec, 24);
  const CliRun ran = run_shell(std::string("/usr/bin/python3 ") + JUDGE_TORCH_HARNESS + " " + dir.string() + " " + kernel);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  return dir;
}

constexpr const char* kTorchLayerNorm = "layernorm fwd stats=none";
constexpr const char* kTorchLlama = "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none";

}  // namespace

TEST(JudgeTorch, LayerNormAndLlamaRmsNormPass) {
  const struct {
    const char* spec;
    const char* kernel;
  } kernels[] = {{kTorchLayerNorm, "layernorm_f32"},
                 {"layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 stats=none", "layernorm_bf16"},
                 {kTorchLlama, "llama"}};
  for (const auto& k : kernels) {
    SCOPED_TRACE(k.kernel);
    const fs::path dir = torch_harness(std::string("torch_") + k.kernel, k.spec, k.kernel);
    const CliRun run = judge(dir);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out).at("passed"), 24);
  }
}

TEST(JudgeTorch, BrokenTwinsAreCaught) {
  const struct {
    const char* spec;
    const char* kernel;
    const char* label;
  } twins[] = {{kTorchLayerNorm, "layernorm_f32_no_eps", "accuracy"},
               {kTorchLlama, "llama_rounds_once", "policy_mismatch"}};
  for (const auto& t : twins) {
    SCOPED_TRACE(t.kernel);
    const fs::path dir = torch_harness(std::string("torch_") + t.kernel, t.spec, t.kernel);
    const CliRun run = judge(dir);
    ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
    const nlohmann::json doc = nlohmann::json::parse(run.out);
    ASSERT_GT(doc.at("findings").get<int>(), 0);
    bool labelled = false;
    for (const auto& k : doc.at("cases")) {
      if (k.at("verdict") != "fail") continue;
      EXPECT_EQ(k.at("worst").at("output"), "y") << k.dump();
      labelled = labelled || k.at("label") == t.label;
    }
    EXPECT_TRUE(labelled) << "no finding labelled " << t.label << "\n" << run.out;
  }
}

TEST(JudgeTorch, ATruncatedOutputsFileIsBadInputNamingTheFileAndTheTensor) {
  const fs::path dir = torch_harness("torch_truncated", kTorchLlama, "llama");
  const std::string bytes = read_whole_file(outputs_of(dir, 3));
  std::ofstream(outputs_of(dir, 3), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 1);
  expect_bad_input(dir, outputs_of(dir, 3), {"truncated", "'y'"});
}
#else
TEST(JudgeTorch, LayerNormAndLlamaRmsNormPass) {
  GTEST_SKIP() << "/usr/bin/python3 could not import torch at configure time: install python3-torch "
                  "(scripts/setup.sh) and configure again";
}
#endif

// `judge --report OUT`: the harness is a kernel row of the report `normcheck
// report` writes (its grade, its policy, its findings with their problem
// files in OUT/findings/); a passing harness is trusted with no finding; an
// OUT that is a file is exit 2 and the report's files are not written.
namespace {

// results.json, checked against its schema, and junit.xml parsed.
nlohmann::json results_of(const fs::path& out) {
  const nlohmann::json doc = nlohmann::json::parse(read_whole_file(out / "results.json"));
  const auto errors = normcheck::test_support::validate(
      doc, nlohmann::json::parse(read_whole_file(NORMCHECK_RESULTS_SCHEMA)));
  EXPECT_TRUE(errors.empty()) << errors.size() << " violations, first: " << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(normcheck::test_support::parse_xml(read_whole_file(out / "junit.xml")).name, "testsuites");
  return doc;
}

}  // namespace

TEST(JudgeReport, TheHarnessIsAKernelRowWithItsFindingsAndTheirProblemFiles) {
  const fs::path dir = generate("report_broken", kLlama, 24);
  harness(dir, "broken.llama_rounds_once", "BF16", JUDGE_HARNESS_BROKEN);
  const fs::path out = scratch_dir() / "report_broken_out";
  fs::remove_all(out);
  const CliRun run = judge(dir, "--json --report " + out.string());
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("report"), fs::absolute(out / "report.html").lexically_normal().string());

  const nlohmann::json results = results_of(out);
  EXPECT_EQ(results.at("schema"), "normcheck-report");
  ASSERT_EQ(results.at("kernels").size(), 1u);
  const nlohmann::json& k = results.at("kernels").at(0);
  EXPECT_EQ(k.at("name"), "harness");
  EXPECT_EQ(k.at("origin"), "plugin");
  EXPECT_EQ(k.at("grade"), "less accurate");  // a policy mismatch: finite, within 2^16 x the bound
  EXPECT_EQ(k.at("policy").at("spec"), kLlama);
  EXPECT_EQ(k.at("rows"), 24);
  EXPECT_EQ(k.at("rows_failed"), doc.at("findings"));
  int with_file = 0;
  for (const auto& row : k.at("row_results")) {
    if (row.at("pass")) {
      EXPECT_FALSE(row.contains("problem_file")) << row.dump();
      continue;
    }
    ++with_file;
    EXPECT_EQ(row.at("label"), "policy_mismatch");
    const std::string file = row.at("problem_file");
    EXPECT_EQ(file, "findings/" + row.at("family").get<std::string>() + ".finding.txt");
    // the copy in the report's folder is the judge's problem file, which `check` reads
    EXPECT_EQ(read_whole_file(out / file), read_whole_file(dir / fs::path(file).filename()));
    EXPECT_EQ(normcheck::to_text(*normcheck::read_problem_file((out / file).string()).spec), kLlama);
    EXPECT_NE(row.at("replay").get<std::string>().find("--input " + file), std::string::npos);
  }
  EXPECT_EQ(with_file, doc.at("findings").get<int>());
  const std::string md = read_whole_file(out / "report.md");
  EXPECT_NE(md.find("| `harness` | plugin | less accurate |"), std::string::npos) << md;
  EXPECT_NE(md.find("Problem file: findings/case-"), std::string::npos) << md;
  EXPECT_EQ(md.find("## Claims"), std::string::npos) << md;
  const std::string junit = read_whole_file(out / "junit.xml");
  EXPECT_NE(junit.find("normcheck.kernels.harness"), std::string::npos);
  EXPECT_NE(junit.find("<failure"), std::string::npos);
  EXPECT_NE(read_whole_file(out / "report.html").find("Judged problems"), std::string::npos);

  // the correct kernel's outputs, judged into the same folder: trusted, no finding, no findings/ left
  harness(dir, "rmsnorm.llama", "BF16");
  const CliRun pass = judge(dir, "--report " + out.string());
  ASSERT_EQ(pass.exit_code, 0) << pass.out << pass.err;
  EXPECT_NE(pass.out.find("report: "), std::string::npos) << pass.out;
  const nlohmann::json trusted = results_of(out).at("kernels").at(0);
  EXPECT_EQ(trusted.at("grade"), "trusted");
  EXPECT_EQ(trusted.at("rows_failed"), 0);
  EXPECT_FALSE(fs::exists(out / "findings"));
  EXPECT_EQ(read_whole_file(out / "junit.xml").find("<failure"), std::string::npos);
}

// A folder whose cases declare two specs: a kernel row per spec, each named with it.
TEST(JudgeReport, CasesOfTwoSpecsAreTwoKernelRows) {
  const std::string gemma = "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma";
  const fs::path dir = judged_llama("report_two_specs");  // cases 0 to 3
  const fs::path other = generate("report_two_specs_gemma", gemma, 6);
  harness(other, "rmsnorm.gemma", "BF16");
  for (const char* file : {"case-005.inputs.safetensors", "case-005.outputs.safetensors"})
    fs::copy_file(other / file, dir / file);
  const fs::path out = scratch_dir() / "report_two_specs_out";
  fs::remove_all(out);
  const CliRun run = judge(dir, "--report " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json kernels = results_of(out).at("kernels");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels.at(0).at("name"), std::string("harness (") + kLlama + ")");
  EXPECT_EQ(kernels.at(0).at("rows"), 4);
  EXPECT_EQ(kernels.at(1).at("name"), "harness (" + gemma + ")");
  EXPECT_EQ(kernels.at(1).at("policy").at("spec"), gemma);
  EXPECT_EQ(kernels.at(1).at("rows"), 1);
  for (const auto& k : kernels) EXPECT_EQ(k.at("grade"), "trusted") << k.dump();
}

// One case that is bad input: exit 2 and nothing written, neither the other
// cases' finding files nor the --report folder.
TEST(JudgeReport, OneBadCaseWritesNothing) {
  const fs::path dir = generate("bad_case_writes_nothing", kLlama, 24);
  harness(dir, "broken.llama_rounds_once", "BF16", JUDGE_HARNESS_BROKEN);
  fs::remove(outputs_of(dir, 1));
  const fs::path out = scratch_dir() / "bad_case_report";
  fs::remove_all(out);
  const CliRun run = judge(dir, "--report " + out.string());
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_FALSE(fs::exists(out));
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".finding.txt"), std::string::npos) << e.path();
}

TEST(JudgeReport, AnOutFolderThatIsAFileIsBadUsageAndNothingIsWritten) {
  const fs::path dir = judged_llama("report_bad_out");
  const fs::path file = scratch_dir() / "report_out_is_a_file";
  fs::remove_all(file);
  std::ofstream(file) << "not a folder";
  const CliRun run = judge(dir, "--report " + file.string());
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(file.string()), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(read_whole_file(file), "not a folder");
  const CliRun inside = judge(dir, "--report " + (file / "sub").string());
  EXPECT_EQ(inside.exit_code, 2) << inside.out << inside.err;

  // bad input: exit 2, and no report is written
  const fs::path out = scratch_dir() / "report_bad_input_out";
  fs::remove_all(out);
  fs::remove(outputs_of(dir, 1));
  const CliRun bad = judge(dir, "--report " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_FALSE(fs::exists(out / "report.html"));
  EXPECT_FALSE(fs::exists(out / "results.json"));
}

namespace {

// gen --accuracy-rows: every input class's realistic rows, each case's class
// in its metadata, fixed by the seed (NORMCHECK_SEED is not read for them).
fs::path accuracy_rows(const std::string& name, const std::string& seed = "") {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  const CliRun run = run_normcheck(std::string("gen --spec '") + kLlama + "' --accuracy-rows --out " + dir.string() +
                                   (seed.empty() ? "" : " --seed " + seed));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("realistic problems of " + std::string(kLlama) + " in 8 input classes"), std::string::npos)
      << run.out;
  return dir;
}

}  // namespace

// A harness's accuracy held in its CI through the files: the correct Llama
// RMSNorm's figures by class written once and held on the next run; the twin
// that rounds once is worse than that baseline (and has findings of its own).
TEST(JudgeBaseline, AHarnessIsHeldToTheFiguresItsCasesGaveBefore) {
  const fs::path dir = accuracy_rows("accuracy_rows");
  harness(dir, "rmsnorm.llama", "BF16");
  const fs::path baseline = scratch_dir() / "judge_baseline.txt";
  const CliRun write = judge(dir, "--update-baseline " + baseline.string() + " --name my.llama");
  ASSERT_EQ(write.exit_code, 0) << write.out << write.err;
  EXPECT_NE(write.out.find("baseline written to " + baseline.string()), std::string::npos) << write.out;
  const std::string text = read_whole_file(baseline);
  EXPECT_NE(text.find("my.llama d_257_4096 y "), std::string::npos) << text;

  const CliRun same = judge(dir, "--check-baseline " + baseline.string() + " --name my.llama");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("baseline: no figure got worse than "), std::string::npos) << same.out;

  harness(dir, "broken.llama_rounds_once", "BF16", JUDGE_HARNESS_BROKEN);
  const CliRun worse = judge(dir, "--json --check-baseline " + baseline.string() + " --name my.llama --worse-by 1.5");
  ASSERT_EQ(worse.exit_code, 1) << worse.out << worse.err;
  const auto doc = nlohmann::json::parse(worse.out);
  bool y_worse = false;
  for (const auto& w : doc.at("accuracy").at("baseline").at("worse"))
    y_worse = y_worse || (w.at("class") == "d_257_4096" && w.at("output") == "y" && w.at("metric") == "error/bound");
  EXPECT_TRUE(y_worse) << worse.out;
}

TEST(JudgeBaseline, CasesThatAreNotTheAccuracyRowsOrOfAnotherSeedAreRefused) {
  const fs::path baseline = scratch_dir() / "judge_baseline_refusals.txt";
  {
    const fs::path dir = accuracy_rows("accuracy_rows_base");
    harness(dir, "rmsnorm.llama", "BF16");
    ASSERT_EQ(judge(dir, "--update-baseline " + baseline.string()).exit_code, 0);
  }
  const fs::path drawn = judged_llama("accuracy_drawn");
  const CliRun no_class = judge(drawn, "--check-baseline " + baseline.string());
  EXPECT_EQ(no_class.exit_code, 2) << no_class.out << no_class.err;
  EXPECT_NE(no_class.err.find("has no input class"), std::string::npos) << no_class.err;
  EXPECT_NE(no_class.err.find("gen --accuracy-rows"), std::string::npos) << no_class.err;

  const fs::path other = accuracy_rows("accuracy_rows_seed5", "5");
  harness(other, "rmsnorm.llama", "BF16");
  const CliRun seed = judge(other, "--check-baseline " + baseline.string());
  EXPECT_EQ(seed.exit_code, 2) << seed.out << seed.err;
  EXPECT_NE(seed.err.find("--accuracy-rows --seed 20261206"), std::string::npos) << seed.err;

  const CliRun both = judge(other, "--check-baseline " + baseline.string() + " --update-baseline /tmp/b.txt");
  EXPECT_EQ(both.exit_code, 2);
  const CliRun mixed = run_normcheck("gen --spec 'rmsnorm fwd' --accuracy-rows --cases 3 --out " +
                                     (scratch_dir() / "mixed").string());
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("no --cases or --shape"), std::string::npos) << mixed.err;
}
