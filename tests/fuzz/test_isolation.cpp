// run_isolated (fuzz/isolation.h): each way a kernel can misbehave becomes its
// label, and this process survives all of them. The kernels are defined here
// as rows of origin plugin; a correct two-pass kernel is the control that must
// pass, so every label below is shown to come from the defect alone.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "isolation.h"
#include "normcheck/bounds.h"

namespace normcheck::fuzz {
namespace {

void twopass(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
             int64_t rows, int64_t cols, float eps) {
  const float d = static_cast<float>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float sum = 0;
    for (int64_t i = 0; i < cols; ++i) sum += xr[i];
    const float mu = sum / d;
    float sq = 0;
    for (int64_t i = 0; i < cols; ++i) sq += (xr[i] - mu) * (xr[i] - mu);
    const float a = 1.0f / std::sqrt(sq / d + eps);
    for (int64_t i = 0; i < cols; ++i) {
      const float h = (xr[i] - mu) * a;
      y[r * cols + i] = (gamma ? gamma[i] * h : h) + (beta ? beta[i] : 0.0f);
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = a;
  }
}

void reads_past_x(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
                  int64_t cols, float eps) {
  volatile float sink = x[rows * cols + 1];  // one past the last element and a bit
  (void)sink;
  twopass(x, g, b, y, m, s, rows, cols, eps);
}
void writes_past_y(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
                   int64_t cols, float eps) {
  twopass(x, g, b, y, m, s, rows, cols, eps);
  y[rows * cols] = 0;
}
void writes_before_y(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
                     int64_t cols, float eps) {
  twopass(x, g, b, y, m, s, rows, cols, eps);
  y[-1] = 0;  // into the canary zone before the array
}
void aborts(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, float) { std::abort(); }
void exits(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, float) { std::exit(0); }
void divides_by_zero(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t cols, float) {
  raise(SIGFPE);
  (void)cols;
}
void hangs(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, float) {
  volatile bool forever = true;
  while (forever) {
  }
}
void skips_rstd(const float* x, const float* g, const float* b, float* y, float* m, float*, int64_t rows,
                int64_t cols, float eps) {
  std::vector<float> s(static_cast<size_t>(rows));
  twopass(x, g, b, y, m, s.data(), rows, cols, eps);
}
void scribbles_x(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
                 int64_t cols, float eps) {
  twopass(x, g, b, y, m, s, rows, cols, eps);
  const_cast<float*>(x)[0] += 1.0f;
}
void flips(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows, int64_t cols,
           float eps) {
  static int calls = 0;
  twopass(x, g, b, y, m, s, rows, cols, eps);
  if (calls++ % 2) y[0] = std::nextafter(y[0], INFINITY);
}
void unbiased(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
              int64_t cols, float eps) {
  twopass(x, g, b, y, m, s, rows, cols, eps);
  for (int64_t r = 0; r < rows; ++r) s[r] *= 1.25f;  // far outside any float32 rounding
}
void nan_for_finite(const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows,
                    int64_t cols, float eps) {
  twopass(x, g, b, y, m, s, rows, cols, eps);
  y[0] = NAN;
}

Kernel row(const char* name, nc_layernorm_fwd_fn fn) {
  return Kernel{.name = name, .op = Op::layernorm_fwd, .origin = Origin::plugin, .dtype = DType::f32,
                .algorithm = "test", .fn = fn, .bound = default_bound(Op::layernorm_fwd)};
}

Problem problem(int64_t rows, int64_t cols) {
  Problem p;
  p.rows = rows;
  p.cols = cols;
  for (int64_t i = 0; i < rows * cols; ++i) p.x.push_back(static_cast<float>((i * 7919) % 13) - 6.0f);
  return p;
}

std::string label(nc_layernorm_fwd_fn fn, int timeout_ms = 2000) {
  IsolationOptions o;
  o.timeout_ms = timeout_ms;
  const Kernel k = row("under_test", fn);
  const std::vector<Problem> ps = {problem(3, 17)};
  return run_isolated(k, ps, o).at(0).label;
}

TEST(Isolation, CorrectKernelPasses) { EXPECT_EQ(label(&twopass), ""); }
TEST(Isolation, ReadPastInputIsOutOfBounds) { EXPECT_EQ(label(&reads_past_x), "out_of_bounds"); }
TEST(Isolation, WritePastOutputIsOutOfBounds) { EXPECT_EQ(label(&writes_past_y), "out_of_bounds"); }
TEST(Isolation, WriteBeforeOutputIsOutOfBounds) { EXPECT_EQ(label(&writes_before_y), "out_of_bounds"); }
TEST(Isolation, AbortIsCrash) { EXPECT_EQ(label(&aborts), "crash"); }
TEST(Isolation, ExitIsCrash) { EXPECT_EQ(label(&exits), "crash"); }
TEST(Isolation, SigfpeIsCrash) { EXPECT_EQ(label(&divides_by_zero), "crash"); }
TEST(Isolation, HangIsHang) { EXPECT_EQ(label(&hangs, 200), "hang"); }
TEST(Isolation, UnwrittenStatisticIsUnwrittenOutput) { EXPECT_EQ(label(&skips_rstd), "unwritten_output"); }
TEST(Isolation, WritingInputIsWritesInput) { EXPECT_EQ(label(&scribbles_x), "writes_input"); }
TEST(Isolation, FlippingBitsIsNondeterministic) { EXPECT_EQ(label(&flips), "nondeterministic"); }
TEST(Isolation, WrongRstdIsAccuracy) { EXPECT_EQ(label(&unbiased), "accuracy"); }
TEST(Isolation, NanForFiniteIsNan) { EXPECT_EQ(label(&nan_for_finite), "nan"); }

// A batch continues after a crashing case in a fresh child: the cases before
// and after it are still evaluated.
TEST(Isolation, BatchSurvivesACrash) {
  void (*crash_on_5)(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, float) =
      [](const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows, int64_t cols,
         float eps) {
        if (cols == 5) std::abort();
        twopass(x, g, b, y, m, s, rows, cols, eps);
      };
  const Kernel k = row("crash_on_5", crash_on_5);
  const std::vector<Problem> ps = {problem(1, 4), problem(1, 5), problem(2, 6)};
  const auto results = run_isolated(k, ps, {});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(results[0].label, "");
  EXPECT_FALSE(results[1].finished);
  EXPECT_EQ(results[1].label, "crash");
  EXPECT_TRUE(results[2].finished);
  EXPECT_EQ(results[2].label, "");
}

}  // namespace
}  // namespace normcheck::fuzz
