// run_isolated (fuzz/isolation.h): each way a kernel can misbehave becomes its
// label, and this process survives all of them. The kernels are defined here
// as rows of origin plugin; a correct two-pass kernel is the control that must
// pass, so every label below is shown to come from the defect alone.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "isolation.h"
#include "kernel_host.h"
#include "my_norms.h"
#include "normcheck/bounds.h"

namespace normcheck::fuzz {
namespace {

// The control: the correct two-pass kernel of examples/in-your-tests.
constexpr nc_layernorm_fwd_fn twopass = &my_layernorm_fwd;

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

TEST(Isolation, CorrectKernelPasses) { EXPECT_EQ(label(twopass), ""); }
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

// A float32 `add` spec without round=sum holds a kernel to the exact sum; a
// kernel that normalizes its float32 sum is told what to declare. Only there:
// a spec with the rounding declared, a 16-bit spec (whose candidate policies
// include the sum's roundings: policy_mismatch names them), a table row (no
// spec text) and a label that is not an error of the outputs get no hint.
TEST(Isolation, AFloat32AddFindingSaysToDeclareTheFloat32Sum) {
  Evaluation ev;
  ev.spec = "layernorm fwd add";
  EXPECT_NE(spec_hint(ev, "nan").find("round=sum:f32"), std::string::npos);
  EXPECT_NE(spec_hint(ev, "accuracy").find("round=sum:f32"), std::string::npos);
  EXPECT_EQ(spec_hint(ev, "crash"), "");
  EXPECT_EQ(spec_hint(ev, ""), "");
  for (const char* quiet : {"layernorm fwd add round=sum:f32", "rmsnorm fwd dtype=bf16 gamma=bf16 add", "rmsnorm fwd",
                            "rmsnorm bwd add", ""}) {
    ev.spec = quiet;
    EXPECT_EQ(spec_hint(ev, "nan"), "") << quiet;
  }
}

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

// IsolationOptions::in_process (the Python module's rows): every case runs in
// this process, a KernelCallFault the call throws is the case's label, and a
// run that stops at the first label leaves the cases after it unrun.
TEST(Isolation, InProcessRunsHereAndLabelsACallFault) {
  static pid_t seen = 0;
  void (*faults_on_5)(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t, float) =
      [](const float* x, const float* g, const float* b, float* y, float* m, float* s, int64_t rows, int64_t cols,
         float eps) {
        seen = getpid();
        if (cols == 5) throw KernelCallFault("exception", "ValueError: five");
        twopass(x, g, b, y, m, s, rows, cols, eps);
      };
  const Kernel k = row("faults_on_5", faults_on_5);
  IsolationOptions o;
  o.in_process = true;
  const std::vector<Problem> ps = {problem(1, 4), problem(1, 5), problem(2, 6)};
  const auto results = run_isolated(k, ps, o);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(seen, getpid());
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(results[0].label, "");
  EXPECT_FALSE(results[1].finished);
  EXPECT_EQ(results[1].label, "exception");
  EXPECT_EQ(results[1].detail, "ValueError: five");
  EXPECT_TRUE(results[2].finished);
  EXPECT_EQ(results[2].label, "");

  o.stop_at_first_label = true;
  const auto stopped = run_isolated(k, ps, o);
  EXPECT_EQ(stopped[1].label, "exception");
  EXPECT_FALSE(stopped[2].finished);
  EXPECT_EQ(stopped[2].label, "");
}

// 16-bit storage (the ABI's extension): the bf16 poison and the bf16 bound.
float from_bf16(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }
uint16_t to_bf16_rounded(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
template <bool kTruncate, bool kSkipLast>
void bf16_fwd(const uint16_t* x, const float* gamma, const float* beta, uint16_t* y, float* mean, float* rstd,
              int64_t rows, int64_t cols, float eps) {
  std::vector<float> xf(static_cast<size_t>(rows * cols)), yf(xf.size());
  for (size_t i = 0; i < xf.size(); ++i) xf[i] = from_bf16(x[i]);
  twopass(xf.data(), gamma, beta, yf.data(), mean, rstd, rows, cols, eps);
  for (size_t i = 0; i + (kSkipLast ? 1 : 0) < yf.size(); ++i)
    y[i] = kTruncate ? static_cast<uint16_t>(std::bit_cast<uint32_t>(yf[i]) >> 16) : to_bf16_rounded(yf[i]);
}

std::string bf16_label(nc_layernorm_fwd16_fn fn) {
  const Kernel k{.name = "bf16_under_test", .op = Op::layernorm_fwd, .origin = Origin::plugin,
                 .dtype = DType::bf16, .algorithm = "test", .fn = fn,
                 .bound = plugin_bound(Op::layernorm_fwd, DType::bf16)};
  // The bound allows 2^-8 |y| for the rounding to bf16 (with_16bit_outputs);
  // truncation errs by the discarded bits, up to one bf16 ulp = 2^-7 |y| / m
  // (m in [1, 2) the mantissa of y), so an element with m near 1 and more than
  // half an ulp discarded breaks it. The input is fixed, and this one has such
  // elements (the rounded kernel passing on it is the control).
  std::vector<Problem> ps = {problem(3, 17)};
  return run_isolated(k, ps, {}).at(0).label;
}

TEST(Isolation, Bf16RoundedKernelPasses) { EXPECT_EQ(bf16_label(&bf16_fwd<false, false>), ""); }
TEST(Isolation, Bf16TruncatingKernelIsAccuracy) { EXPECT_EQ(bf16_label(&bf16_fwd<true, false>), "accuracy"); }
TEST(Isolation, Bf16UnwrittenElementIsUnwrittenOutput) {
  EXPECT_EQ(bf16_label(&bf16_fwd<false, true>), "unwritten_output");
}

}  // namespace
}  // namespace normcheck::fuzz
