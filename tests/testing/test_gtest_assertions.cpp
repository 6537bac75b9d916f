// <normcheck/gtest.h>: NormWithinBound on our own scalar kernels through their
// plugin-ABI function pointers. A correct kernel passes for each of the four
// function types; the one-pass control, a nondeterministic kernel and a problem
// outside the covered range fail, with the message the header promises, and the
// saved problem file reads back to the same problem. A version-2 kernel
// (nc_kernel_v2) with a fused residual add, 16-bit tensors and a row stride
// passes; its twin that normalizes x instead of the sum fails, naming the
// output, row and column, and its problem file carries the spec.
#include <normcheck/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <variant>

#include "normcheck/float_format.h"
#include "normcheck/row_file.h"

namespace normcheck {
namespace {

template <class Fn>
Fn fn_of(const char* name) {
  const Kernel* k = find_kernel(name);
  if (!k) throw std::logic_error(std::string("no kernel ") + name);
  return std::get<Fn>(k->fn);
}

Problem shifted(int64_t rows, int64_t cols, float c, bool backward) {
  Problem p;
  p.rows = rows;
  p.cols = cols;
  for (int64_t i = 0; i < rows * cols; ++i) p.x.push_back(c + std::sin(static_cast<float>(i) * 0.7f));
  if (backward)
    for (int64_t i = 0; i < rows * cols; ++i) p.dy.push_back(std::cos(static_cast<float>(i) * 0.3f));
  return p;
}

// The path a failure message says the problem is saved in ("" if none).
std::string saved_path(const std::string& message) {
  const std::string saved = "replay: the problem is saved in ";
  const auto at = message.find(saved);
  if (at == std::string::npos) return {};
  return message.substr(at + saved.size(), message.find('\n', at) - at - saved.size());
}

TEST(NormWithinBound, CorrectKernelsOfEveryType) {
  EXPECT_NORM_WITHIN_BOUND(fn_of<nc_layernorm_fwd_fn>("layernorm_fwd.twopass"), shifted(2, 1024, 1e4f, false));
  EXPECT_NORM_WITHIN_BOUND(fn_of<nc_layernorm_bwd_fn>("layernorm_bwd.twopass"), shifted(2, 512, 3.0f, true));
  EXPECT_NORM_WITHIN_BOUND(fn_of<nc_rmsnorm_fwd_fn>("rmsnorm_fwd.scalar"), shifted(2, 768, 1.0f, false));
  EXPECT_NORM_WITHIN_BOUND(fn_of<nc_rmsnorm_bwd_fn>("rmsnorm_bwd.scalar"), shifted(2, 768, 1.0f, true));
}

// Negative control: the one-pass variance loses every digit at |mean|/sigma ~ 1e4.
TEST(NormWithinBound, OnePassFailsWithElementValuesAllowanceAndReplay) {
  const Problem problem = shifted(2, 1024, 1e4f, false);
  const auto onepass = fn_of<nc_layernorm_fwd_fn>("layernorm_fwd.naive_onepass");
  const ::testing::AssertionResult r = testing::NormWithinBound("onepass", "problem", onepass, problem);
  ASSERT_FALSE(r);
  const std::string m = r.message();
  EXPECT_NE(m.find("onepass (layernorm_fwd) on problem (2 x 1024"), std::string::npos) << m;
  EXPECT_NE(m.find("worst element: output "), std::string::npos) << m;
  EXPECT_NE(m.find("computed  0x"), std::string::npos) << m;
  EXPECT_NE(m.find("exact     0x"), std::string::npos) << m;
  EXPECT_NE(m.find("allowance 0x"), std::string::npos) << m;
  const std::string path = saved_path(m);
  ASSERT_FALSE(path.empty()) << m;
  EXPECT_NE(m.find("normcheck check --input " + path + " --plugin"), std::string::npos) << m;
  const ProblemFile file = read_problem_file(path);
  ASSERT_TRUE(file.whole);
  EXPECT_EQ(file.op, Op::layernorm_fwd);
  ASSERT_EQ(file.problems.size(), 1u);
  EXPECT_EQ(file.problems[0].x, problem.x);  // bit for bit (no NaN here)
  EXPECT_EQ(file.problems[0].eps, problem.eps);
}

// A kernel whose second call differs by one ULP in y[0].
int g_calls = 0;
void drifting(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
              int64_t rows, int64_t cols, float eps) {
  fn_of<nc_layernorm_fwd_fn>("layernorm_fwd.twopass")(x, gamma, beta, y, mean, rstd, rows, cols, eps);
  if (g_calls++ % 2 == 1) y[0] = std::nextafter(y[0], 1e30f);
}

TEST(NormWithinBound, NondeterministicFails) {
  g_calls = 0;
  const ::testing::AssertionResult r = testing::NormWithinBound("drifting", "p", drifting, shifted(1, 64, 0.0f, false));
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("nondeterministic"), std::string::npos) << r.message();
}

// Outside layernorm_fwd.twopass's declared range the bound promises nothing:
// not a pass.
TEST(NormWithinBound, OutsideTheCoveredRangeIsNotAPass) {
  Problem p = shifted(1, 64, 0.0f, false);
  p.x[3] = 3e38f;
  const ::testing::AssertionResult r =
      testing::NormWithinBound("twopass", "p", fn_of<nc_layernorm_fwd_fn>("layernorm_fwd.twopass"), p);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("not checked"), std::string::npos) << r.message();
}

// ---- Version 2 ----

// "rmsnorm fwd dtype=bf16 add round=sum:f32" (FlashInfer's fused_add_rmsnorm):
// s = x + residual in float32, stored as bf16 in residual_out, the float32 s
// normalized: r = 1/sqrt(mean(s^2) + eps) in double, y = bf16(s r gamma).
// `ignore_residual`: the defect, y = bf16(x r gamma), x scaled in place of s
// (residual_out and rrms still those of the sum).
constexpr const char* kFusedAddSpec = "rmsnorm fwd dtype=bf16 add round=sum:f32";

uint16_t* bf16_at(const nc_tensor& t, int64_t i, int64_t j) {
  return static_cast<uint16_t*>(t.data) + i * t.row_stride + j;
}

template <bool ignore_residual>
void fused_add_rmsnorm(const nc_call* c) {
  for (int64_t i = 0; i < c->rows; ++i) {
    const auto sum = [&](int64_t j) {
      return float_from_bf16(*bf16_at(c->x, i, j)) + float_from_bf16(*bf16_at(c->residual, i, j));
    };
    double squares = 0;
    for (int64_t j = 0; j < c->cols; ++j) {
      const float s = sum(j);
      *bf16_at(c->residual_out, i, j) = bf16_from_float(s);
      squares += static_cast<double>(s) * s;
    }
    const double r = 1 / std::sqrt(squares / static_cast<double>(c->cols) + c->eps);
    if (c->rstd.data) static_cast<float*>(c->rstd.data)[i * c->rstd.row_stride] = static_cast<float>(r);
    for (int64_t j = 0; j < c->cols; ++j) {
      const double v = ignore_residual ? float_from_bf16(*bf16_at(c->x, i, j)) : sum(j);
      const double g = c->gamma.data ? static_cast<const float*>(c->gamma.data)[j] : 1.0;
      *bf16_at(c->y, i, j) = bf16_from_float(static_cast<float>(v * r * g));
    }
  }
}

// 3 rows of 200, 211 apart, x and the residual bf16 values of comparable
// size (the sum differs from x everywhere), gamma near 1.
Problem fused_add_problem() {
  Problem p;
  p.rows = 3;
  p.cols = 200;
  p.row_stride = 211;
  for (int64_t i = 0; i < p.rows * p.cols; ++i) {
    p.x.push_back(float_from_bf16(bf16_from_float(1 + std::sin(static_cast<float>(i) * 0.7f))));
    p.residual.push_back(float_from_bf16(bf16_from_float(2 * std::cos(static_cast<float>(i) * 0.3f))));
  }
  for (int64_t j = 0; j < p.cols; ++j) p.gamma.push_back(1 + std::sin(static_cast<float>(j)) / 8);
  return p;
}

TEST(NormWithinBound, CorrectVersion2KernelPasses) {
  const nc_kernel_v2 fused = {"fused_add", kFusedAddSpec, nullptr, fused_add_rmsnorm<false>};
  EXPECT_NORM_WITHIN_BOUND(fused, fused_add_problem());
}

// Negative control: normalizing x instead of the sum puts every y far outside
// the policy's range; the message names the spec, the output, row and column.
TEST(NormWithinBound, BrokenVersion2KernelFailsNamingOutputRowAndColumn) {
  const nc_kernel_v2 broken = {"fused_add_ignores_residual", kFusedAddSpec, nullptr, fused_add_rmsnorm<true>};
  const Problem problem = fused_add_problem();
  const ::testing::AssertionResult r = testing::NormWithinBound("broken", "problem", broken, problem);
  ASSERT_FALSE(r);
  const std::string m = r.message();
  EXPECT_NE(m.find("broken (" + std::string(kFusedAddSpec) + ") on problem (3 x 200"), std::string::npos) << m;
  EXPECT_NE(m.find("residual, row stride 211"), std::string::npos) << m;
  EXPECT_NE(m.find("outside the range its spec's rounding policy admits"), std::string::npos) << m;
  EXPECT_NE(m.find("worst element: output y, row "), std::string::npos) << m;
  EXPECT_NE(m.find(", col "), std::string::npos) << m;
  ASSERT_FALSE(saved_path(m).empty()) << m;
  const ProblemFile file = read_problem_file(saved_path(m));
  ASSERT_TRUE(file.spec.has_value());
  EXPECT_EQ(to_text(*file.spec), to_text(*parse_spec(kFusedAddSpec).spec));
  ASSERT_EQ(file.problems.size(), 1u);
  EXPECT_EQ(file.problems[0].residual, problem.residual);
  EXPECT_EQ(file.problems[0].row_stride, 211);
}

// A spec or domain that is not one fails the assertion with the parser's words.
TEST(NormWithinBound, Version2EntryWithABadSpecOrDomainFails) {
  const nc_kernel_v2 bad_spec = {"k", "rmsnorm fwd mean=f32", nullptr, fused_add_rmsnorm<false>};
  const ::testing::AssertionResult r = testing::NormWithinBound("bad_spec", "p", bad_spec, fused_add_problem());
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("is not one"), std::string::npos) << r.message();
  const nc_kernel_v2 bad_domain = {"k", kFusedAddSpec, "d=9..3", fused_add_rmsnorm<false>};
  const ::testing::AssertionResult d = testing::NormWithinBound("bad_domain", "p", bad_domain, fused_add_problem());
  ASSERT_FALSE(d);
  EXPECT_NE(std::string(d.message()).find("its domain \"d=9..3\" is not one"), std::string::npos) << d.message();
}

}  // namespace
}  // namespace normcheck
