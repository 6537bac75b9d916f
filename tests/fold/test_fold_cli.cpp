// `normcheck fold` end to end on files the test makes: a good Pre-LN block in
// float32, bf16 and f16 (folded, verified, written, and the folded weights are
// what the fold says), the negative control (--wrong-side: exit 1, nothing
// written), an f16 fold that overflows (exit 1), and every kind of bad input
// (exit 2, a reason on stderr, nothing written, an existing output untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "fold/round.h"
#include "fold/safetensors.h"
#include "fold_files.h"
#include "normcheck_cli.h"

namespace nf = normcheck::fold;
namespace ft = normcheck::fold_test;
using normcheck::DType;
using normcheck::test_support::CliRun;
using normcheck::test_support::run_normcheck;
using normcheck::test_support::scratch_dir;

namespace {

std::string write(const std::string& name, const std::string& bytes) {
  const auto path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string out_path(const std::string& name) {
  const auto path = scratch_dir() / name;
  std::filesystem::remove(path);
  return path.string();
}

CliRun fold(const std::string& weights, const std::string& spec, const std::string& out, const std::string& extra = "") {
  return run_normcheck("fold --weights " + weights + " --spec " + spec + " --out " + out + " --seed 5 " + extra);
}

std::vector<double> values(const nf::TensorFile& f, const std::string& name) {
  const nf::Tensor* t = f.find(name);
  EXPECT_NE(t, nullptr) << name;
  return t ? nf::tensor_values(*t) : std::vector<double>{};
}

}  // namespace

TEST(FoldCli, FoldsVerifiesAndWritesAPreLnBlock) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const std::string tag(nf::dtype_name(t));
    SCOPED_TRACE(tag);
    const long d = 24, e = 10;
    const nf::TensorFile in = ft::pre_ln_block(t, d, e, 11);
    const std::string weights = write("block_" + tag + ".safetensors", nf::serialize_safetensors(in));
    const std::string spec = write("spec.json", ft::kPreLnSpec);
    const std::string out = out_path("folded_" + tag + ".safetensors");
    const CliRun run = fold(weights, spec, out, "--json");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto doc = nlohmann::json::parse(run.out);
    EXPECT_EQ(doc.at("seed"), 5);
    EXPECT_TRUE(doc.at("ok"));
    EXPECT_TRUE(doc.at("written"));
    ASSERT_EQ(doc.at("consumers").size(), 3u);
    for (const auto& c : doc.at("consumers")) {
      EXPECT_TRUE(c.at("within_bound"));
      EXPECT_LE(c.at("diff_over_bound").get<double>(), 1.0);
      EXPECT_EQ(c.at("dtype"), tag);
    }
    ASSERT_EQ(doc.at("writers").size(), 2u);

    const nf::TensorFile got = nf::read_safetensors(out);
    // The norm is now the identity affine.
    for (double g : values(got, "ln.weight")) EXPECT_EQ(g, 1.0);
    for (double b : values(got, "ln.bias")) EXPECT_EQ(b, 0.0);
    // W' = round(W diag(gamma)), entry by entry; k got a new bias tensor.
    const auto gamma = values(in, "ln.weight"), beta = values(in, "ln.bias");
    const auto w = values(in, "q.weight"), wf = values(got, "q.weight");
    for (long i = 0; i < e; ++i)
      for (long j = 0; j < d; ++j) EXPECT_EQ(wf[i * d + j], nf::round_to_storage(t, w[i * d + j] * gamma[j]));
    const nf::Tensor* kb = got.find("k.bias");
    ASSERT_NE(kb, nullptr);
    EXPECT_EQ(kb->shape, std::vector<int64_t>{e});
    EXPECT_EQ(kb->dtype, tag);
    // The centred writer's columns sum to ~0 (one storage rounding per entry).
    const auto wo = values(got, "out.weight");
    const double us = normcheck::unit_roundoff(t);
    for (long j = 0; j < e; ++j) {
      double s = 0, a = 0;
      for (long i = 0; i < d; ++i) s += wo[i * e + j], a += std::fabs(wo[i * e + j]);
      EXPECT_LE(std::fabs(s), 2 * us * a) << j;
    }
    // The untouched tensor and the metadata are carried through.
    EXPECT_EQ(got.find("position_ids")->bytes, in.find("position_ids")->bytes);
    EXPECT_EQ(got.metadata.at("format"), "pt");
  }
}

// GPT-2 stores its Linears as Conv1D, [in, out]: "layout": "in_out" folds
// gamma into the rows; a Conv1D writer [k, d] is centred with axis columns,
// its bias too.
TEST(FoldCli, Conv1DLayoutFoldsRowsAndCentresColumnsWriters) {
  const long d = 12, e = 3 * d, k = 20;
  std::mt19937_64 rng(21);
  nf::TensorFile in;
  in.tensors.push_back(ft::tensor("h.0.ln_1.weight", DType::f32, {d}, ft::gaussian(d, 1, 0.3, rng)));
  in.tensors.push_back(ft::tensor("h.0.ln_1.bias", DType::f32, {d}, ft::gaussian(d, 0, 0.3, rng)));
  in.tensors.push_back(ft::tensor("h.0.attn.c_attn.weight", DType::f32, {d, e}, ft::gaussian(d * e, 0, 0.3, rng)));
  in.tensors.push_back(ft::tensor("h.0.attn.c_attn.bias", DType::f32, {e}, ft::gaussian(e, 0, 0.1, rng)));
  in.tensors.push_back(ft::tensor("h.0.mlp.c_proj.weight", DType::f32, {k, d}, ft::gaussian(k * d, 0.3, 0.2, rng)));
  in.tensors.push_back(ft::tensor("h.0.mlp.c_proj.bias", DType::f32, {d}, ft::gaussian(d, 1, 0.2, rng)));
  const std::string spec = R"({"norms": [{"kind": "layernorm", "placement": "pre_ln",
      "weight": "h.0.ln_1.weight", "bias": "h.0.ln_1.bias",
      "consumers": [{"weight": "h.0.attn.c_attn.weight", "bias": "h.0.attn.c_attn.bias", "layout": "in_out"}]}],
    "centre_writers": [{"weight": "h.0.mlp.c_proj.weight", "bias": "h.0.mlp.c_proj.bias", "axis": "columns"}]})";
  const std::string out = out_path("gpt2_out.safetensors");
  const CliRun run = fold(write("gpt2.safetensors", nf::serialize_safetensors(in)), write("gpt2.json", spec), out, "--json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nf::TensorFile got = nf::read_safetensors(out);
  const auto gamma = values(in, "h.0.ln_1.weight"), w = values(in, "h.0.attn.c_attn.weight");
  const auto wf = values(got, "h.0.attn.c_attn.weight");
  for (long j = 0; j < d; ++j)
    for (long i = 0; i < e; ++i) EXPECT_EQ(wf[j * e + i], static_cast<double>(static_cast<float>(w[j * e + i] * gamma[j])));
  const auto p = values(got, "h.0.mlp.c_proj.weight"), pb = values(got, "h.0.mlp.c_proj.bias");
  for (long r = 0; r < k; ++r) {
    double s = 0, a = 0;
    for (long j = 0; j < d; ++j) s += p[r * d + j], a += std::fabs(p[r * d + j]);
    EXPECT_LE(std::fabs(s), 0x1p-23 * a) << r;
  }
  double sb = 0;
  for (double v : pb) sb += v;
  EXPECT_LE(std::fabs(sb), 1e-5);
  // The same consumer with the default layout does not fit: [12, 36] reads 36 features.
  {
    const std::string wrong = R"({"norms": [{"kind": "rmsnorm", "placement": "pre_ln", "weight": "h.0.ln_1.weight",
        "consumers": [{"weight": "h.0.attn.c_attn.weight"}]}]})";
    const CliRun bad = fold(write("gpt2.safetensors", nf::serialize_safetensors(in)), write("gpt2_bad.json", wrong),
                            out_path("gpt2_bad.safetensors"));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("expected [out, 12]"), std::string::npos) << bad.err;
  }
}

TEST(FoldCli, StorageActivationsAreCheckedToo) {
  const std::string weights = write("act.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::bf16, 32, 8, 9)));
  const CliRun run = fold(weights, write("spec.json", ft::kPreLnSpec), out_path("act_out.safetensors"),
                          "--activations storage --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("activations"), "storage");
  // With bf16 activations both paths carry bf16 roundings: errors of the same order.
  for (const auto& c : doc.at("consumers")) EXPECT_GT(c.at("unfolded_error").get<double>(), 1e-5);
  const CliRun bad = fold(weights, write("spec.json", ft::kPreLnSpec), out_path("act_out.safetensors"), "--activations half");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--activations must be float32 or storage"), std::string::npos) << bad.err;
}

TEST(FoldCli, TextOutputNamesEachConsumer) {
  const std::string weights = write("text.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::f32, 8, 4, 2)));
  const CliRun run = fold(weights, write("spec.json", ft::kPreLnSpec), out_path("text_out.safetensors"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("ok   q.weight <- ln (F32, 4 x 8)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("fold: seed 5"), std::string::npos);
}

// Negative control: the wrong-side fold breaks the bound, exit 1, no file.
TEST(FoldCli, WrongSideFoldIsCaught) {
  const std::string weights = write("control.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::f32, 16, 16, 3)));
  const std::string out = out_path("control_out.safetensors");
  const CliRun run = fold(weights, write("spec.json", ft::kPreLnSpec), out, "--wrong-side --json");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_FALSE(doc.at("ok"));
  EXPECT_FALSE(doc.at("written"));
  EXPECT_GT(doc.at("consumers")[0].at("diff_over_bound").get<double>(), 1.0);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// f16: gamma ~ 300 and |W| ~ 300 make W gamma overflow 65504: exit 1.
TEST(FoldCli, F16FoldThatOverflowsIsRefusedAsAFinding) {
  const std::string weights =
      write("overflow.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::f16, 16, 8, 4, 300, 300 * 4)));
  const std::string out = out_path("overflow_out.safetensors");
  const CliRun run = fold(weights, write("spec.json", ft::kPreLnSpec), out, "--json");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_GT(doc.at("consumers")[0].at("overflowed_weights").get<long>(), 0);
  EXPECT_FALSE(std::filesystem::exists(out));
}

namespace {

// Exit 2, the reason on stderr, nothing written, a previous output untouched.
void expect_bad_input(const std::string& weights, const std::string& spec_text, const std::string& reason) {
  const std::string out = (scratch_dir() / "keep.safetensors").string();
  std::ofstream(out, std::ios::binary) << "previous";
  const CliRun run = fold(weights, write("bad_spec.json", spec_text), out);
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(reason), std::string::npos) << run.err;
  std::ifstream in(out, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "previous");
  for (const auto& entry : std::filesystem::directory_iterator(scratch_dir()))
    EXPECT_EQ(entry.path().filename().string().find("keep.safetensors."), std::string::npos) << "temporary left behind";
}

}  // namespace

TEST(FoldCli, BadFilesExitTwoAndWriteNothing) {
  const std::string good = nf::serialize_safetensors(ft::pre_ln_block(DType::f32, 8, 4, 5));
  expect_bad_input(write("trunc.safetensors", good.substr(0, good.size() - 10)), ft::kPreLnSpec, "past the data");
  expect_bad_input(write("short.safetensors", good.substr(0, 20)), ft::kPreLnSpec, "truncated");
  expect_bad_input(write("overlap.safetensors",
                         ft::raw_file(R"({"ln.weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"q.weight":{"dtype":"F32","shape":[1,2],"data_offsets":[4,12]}})",
                                      std::string(12, '\0'))),
                   ft::kPreLnSpec, "overlap");
  expect_bad_input(write("lies.safetensors",
                         ft::raw_file(R"({"ln.weight":{"dtype":"F32","shape":[8],"data_offsets":[0,16]}})", std::string(16, '\0'))),
                   ft::kPreLnSpec, "needs 32 bytes");
  expect_bad_input(write("offsets.safetensors",
                         ft::raw_file(R"({"ln.weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(20, '\0'))),
                   ft::kPreLnSpec, "belong to no tensor");
  expect_bad_input((scratch_dir() / "does_not_exist.safetensors").string(), ft::kPreLnSpec, "cannot open");
}

TEST(FoldCli, SpecsTheFileDoesNotFitExitTwo) {
  const std::string weights = write("fit.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::bf16, 8, 4, 6)));
  // A name the file lacks.
  expect_bad_input(weights, R"({"norms":[{"kind":"layernorm","placement":"pre_ln","weight":"ln.weight","bias":"ln.bias",
    "consumers":[{"weight":"mlp.up.weight"}]}]})", "the file has no tensor 'mlp.up.weight'");
  // Shapes that do not fit: out.weight is [8, 4], reads 4 features, gamma has 8.
  expect_bad_input(weights, R"({"norms":[{"kind":"rmsnorm","placement":"pre_ln","weight":"ln.weight",
    "consumers":[{"weight":"out.weight"}]}]})", "expected [out, 8]");
  // A non-float tensor as gamma.
  expect_bad_input(weights, R"({"norms":[{"kind":"rmsnorm","placement":"pre_ln","weight":"position_ids",
    "consumers":[{"weight":"q.weight"}]}]})", "is I64, not F32, BF16 or F16");
  // beta with nowhere to go.
  expect_bad_input(weights, R"({"norms":[{"kind":"layernorm","placement":"pre_ln","weight":"ln.weight","bias":"ln.bias",
    "consumers":[{"weight":"k.weight"}]}]})", "name one with \"new_bias\"");
  // A Post-LN norm (F4).
  expect_bad_input(weights, R"({"norms":[{"kind":"layernorm","placement":"post_ln","weight":"ln.weight","bias":"ln.bias",
    "consumers":[{"weight":"q.weight","bias":"q.bias"}]}]})", "is a Post-LN norm");
  // Spec typos and repeats.
  expect_bad_input(weights, R"({"norms":[{"kind":"layernorm","placement":"pre_ln","weight":"ln.weight","consumer":[]}]})",
                   "unknown key 'consumer'");
  expect_bad_input(weights, R"({"norms":[{"kind":"rmsnorm","placement":"pre_ln","weight":"ln.weight",
    "consumers":[{"weight":"q.weight"},{"weight":"q.weight"}]}]})", "appears twice");
  expect_bad_input(weights, "{", "not valid JSON");
  // A NaN in a weight the spec folds.
  nf::TensorFile with_nan = ft::pre_ln_block(DType::f16, 8, 4, 7);
  auto q = nf::tensor_values(*with_nan.find("q.weight"));
  q[5] = std::nan("");
  nf::set_tensor_values(*with_nan.find("q.weight"), q);
  expect_bad_input(write("nan.safetensors", nf::serialize_safetensors(with_nan)), ft::kPreLnSpec,
                   "tensor 'q.weight' holds a NaN at flat index 5");
}

// NORMCHECK_SEED picks the rows when --seed is not given; the seed is printed.
TEST(FoldCli, SeedFromTheEnvironment) {
  const std::string weights = write("seed.safetensors", nf::serialize_safetensors(ft::pre_ln_block(DType::f32, 8, 4, 8)));
  const CliRun run = run_normcheck("fold --weights " + weights + " --spec " + write("spec.json", ft::kPreLnSpec) +
                                   " --out " + out_path("seed_out.safetensors") + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const char* env = std::getenv("NORMCHECK_SEED");
  EXPECT_EQ(nlohmann::json::parse(run.out).at("seed").get<uint64_t>(), env ? std::stoull(env) : 20261121ull);
  const CliRun bad = run_normcheck("fold --weights " + weights + " --spec " + write("spec.json", ft::kPreLnSpec) +
                                   " --out " + out_path("seed_out.safetensors") + " --seed banana");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad seed 'banana'"), std::string::npos) << bad.err;
}
