// <normcheck/gtest.h>: NormWithinBound on our own scalar kernels through their
// plugin-ABI function pointers. A correct kernel passes for each of the four
// function types; the one-pass control, a nondeterministic kernel and a problem
// outside the covered range fail, with the message the header promises, and the
// saved problem file reads back to the same problem.
#include <normcheck/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <variant>

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
  const std::string saved = "replay: the problem is saved in ";
  const auto at = m.find(saved);
  ASSERT_NE(at, std::string::npos) << m;
  const std::string path = m.substr(at + saved.size(), m.find('\n', at) - at - saved.size());
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

}  // namespace
}  // namespace normcheck
