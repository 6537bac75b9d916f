// declines() (kernel.h): the one gate between a kernel and a problem. Each
// reason is given in its turn, and a request inside everything is taken.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "normcheck/kernel.h"
#include "normcheck/row_terms.h"

namespace normcheck {
namespace {

void rms_bwd(const float*, const float*, const float*, const float*, float*, float*, int64_t, int64_t) {}

std::string wide_rows(const Shape& s) { return s.cols > 100 ? "rows longer than 100" : ""; }
std::string small_statistic(float saved) { return saved < 1 ? "a statistic below 1" : ""; }

Kernel gated() {
  return Kernel{.name = "test.gated", .op = Op::rmsnorm_bwd, .origin = Origin::ours, .dtype = DType::f32,
                .algorithm = "does nothing", .fn = &rms_bwd, .bound = nullptr,
                .range = {.max_abs_x = 8, .sqrt_d_scaled = true, .handles_nonfinite = false},
                .declines = &wide_rows, .declines_saved_statistic = &small_statistic};
}

TEST(Declines, TakesARequestInsideEverything) {
  const std::vector<float> x = {3.9f, -4.0f, 0.0f, 1.0f}, dy = {1, 2, 3, 4}, saved = {1.0f, 2.0f};
  EXPECT_EQ(declines(gated(), {.shape = {2, 2}, .x = x, .dy = dy, .saved_statistic = saved}), "");
  // An empty span is not checked.
  EXPECT_EQ(declines(gated(), {Shape{2, 2}}), "");
  // A row without a gate takes every request.
  Kernel open = gated();
  open.range = {};
  open.declines = nullptr;
  open.declines_saved_statistic = nullptr;
  const std::vector<float> huge = {NAN, 3e38f};
  EXPECT_EQ(declines(open, {.shape = {1, 200}, .x = huge, .saved_statistic = std::vector<float>{0.0f}}), "");
}

TEST(Declines, TheShape) {
  EXPECT_EQ(declines(gated(), {Shape{1, 101}}), "rows longer than 100");
}

TEST(Declines, ANonFiniteInputTheKernelDoesNotHandle) {
  const std::vector<float> finite = {1, 1, 1, 1}, with_inf = {1, INFINITY, 1, 1};
  EXPECT_NE(declines(gated(), {.shape = {2, 2}, .x = with_inf}).find("non-finite"), std::string::npos);
  EXPECT_NE(declines(gated(), {.shape = {2, 2}, .x = finite, .dy = with_inf}).find("non-finite"),
            std::string::npos);
}

TEST(Declines, AnXBeyondTheDeclaredRange) {
  // max_abs_x / sqrt(d) = 8 / sqrt(4) = 4 on rows of 4.
  const std::vector<float> inside = {4, -4, 0, 1}, outside = {4, -4.01f, 0, 1};
  EXPECT_EQ(declines(gated(), {.shape = {1, 4}, .x = inside}), "");
  const std::string reason = declines(gated(), {.shape = {1, 4}, .x = outside});
  EXPECT_EQ(reason, "|x| = 4.01 is outside the kernel's declared domain |x|<=8/sqrt(d) (|x| <= 4 here)");
  const InputRange scaled{.max_abs_x = 8, .sqrt_d_scaled = true}, flat{.max_abs_x = 8};
  EXPECT_EQ(scaled.limit(4), 4);
  EXPECT_EQ(scaled.limit(0), 8);  // d < 1 counts as 1
  EXPECT_EQ(flat.limit(4), 8);
}

// The declared domain's d range and min_eps: each limit is named in the
// reason; the ends of the range are inside.
TEST(Declines, ADOutsideTheDeclaredDomain) {
  Kernel k = gated();
  k.range.min_d = 4;
  k.range.max_d = 64;
  EXPECT_EQ(declines(k, {Shape{1, 4}}), "");
  EXPECT_EQ(declines(k, {Shape{1, 64}}), "");
  EXPECT_EQ(declines(k, {Shape{1, 3}}), "d = 3 is outside the kernel's declared domain d=4..64");
  EXPECT_EQ(declines(k, {Shape{1, 65}}), "d = 65 is outside the kernel's declared domain d=4..64");
  // An empty problem runs nothing: no d to hold to the range.
  EXPECT_EQ(declines(k, {Shape{0, 0}}), "");
  EXPECT_EQ(declines(k, {Shape{3, 0}}), "");
  EXPECT_EQ(declines(k, {Shape{0, 3}}), "");
}

TEST(Declines, AnEpsBelowTheDeclaredMinimum) {
  Kernel k = gated();
  k.range.min_eps = 1e-6f;
  EXPECT_EQ(declines(k, {.shape = {1, 2}, .eps = 1e-6f}), "");  // the float eps = 1e-6 is inside
  EXPECT_EQ(declines(k, {.shape = {1, 2}, .eps = 0.0f}), "eps = 0 is outside the kernel's declared domain eps>=1e-06");
  EXPECT_NE(declines(k, {.shape = {1, 2}, .eps = NAN}), "");
  EXPECT_EQ(declines(k, {Shape{1, 2}}), "");  // no eps given: not checked
  // Without a declared minimum every eps is taken, 0 and NaN included.
  EXPECT_EQ(declines(gated(), {.shape = {1, 2}, .eps = 0.0f}), "");
  EXPECT_EQ(declines(gated(), {.shape = {1, 2}, .eps = NAN}), "");
}

TEST(Declines, ASavedStatisticNamingItsRow) {
  const std::vector<float> saved = {1.5f, 2.0f, 0.5f};
  EXPECT_EQ(declines(gated(), {.shape = {3, 2}, .saved_statistic = saved}),
            "row 2 (rrms = 0.5): a statistic below 1");
  Kernel layernorm = gated();
  layernorm.op = Op::layernorm_bwd;
  EXPECT_EQ(declines(layernorm, {.shape = {3, 2}, .saved_statistic = saved}),
            "row 2 (rstd = 0.5): a statistic below 1");
}

}  // namespace
}  // namespace normcheck

namespace normcheck {
namespace {

// |x|>=M: a nonzero x below M is outside; zeros are inside.
TEST(Declines, ANonzeroXBelowTheDeclaredSmallest) {
  Kernel k = gated();
  k.range = parse_domain("|x|>=2^-126");
  const std::vector<float> zeros = {0.0f, -0.0f, 1.0f, 0x1p-126f}, subnormal = {1.0f, 0x1p-130f, 0, 0};
  EXPECT_EQ(declines(k, {.shape = {1, 4}, .x = zeros}), "");
  EXPECT_EQ(declines(k, {.shape = {1, 4}, .x = subnormal}),
            "|x| = 7.35e-40 is outside the kernel's declared domain |x|>=2^-126 (a nonzero x)");
}

// The row terms read Request::row_scales; the reason names the row and the term.
TEST(Declines, ARowOutsideARowTerm) {
  Kernel k = gated();
  k.op = Op::layernorm_fwd;
  k.range = parse_domain("|mean|/sigma<=1e4 sigma>=2^-126");
  const RowScale inside{.scale_square = 1, .mean_over_sigma = 1e4};
  const RowScale ill{.scale_square = 1, .mean_over_sigma = 1e5};
  const RowScale tiny{.scale_square = 0x1p-260, .mean_over_sigma = 0};
  const RowScale constant{.scale_square = 0, .mean_over_sigma = INFINITY};
  const RowScale nonfinite{.finite = false, .scale_square = NAN, .mean_over_sigma = NAN};
  EXPECT_EQ(declines(k, {.shape = {2, 4}, .row_scales = {inside, nonfinite}}), "");
  EXPECT_EQ(declines(k, {.shape = {2, 4}, .row_scales = {inside, ill}}),
            "row 1: |mean|/sigma = 1e+05 is outside the kernel's declared domain |mean|/sigma<=10000");
  EXPECT_EQ(declines(k, {.shape = {2, 4}, .row_scales = {tiny, inside}}),
            "row 0: sigma = 7.35e-40 is outside the kernel's declared domain sigma>=2^-126");
  EXPECT_EQ(declines(k, {.shape = {1, 4}, .row_scales = {constant}}),
            "row 0: sigma = 0 is outside the kernel's declared domain sigma>=2^-126");
  // An RMSNorm row has no |mean|/sigma (NaN): only its rms is held to sigma>=S.
  const RowScale rms{.scale_square = 1, .mean_over_sigma = NAN};
  EXPECT_EQ(row_terms_reason(k.range, rms), "");
  // No row_scales: the row terms are not checked (request_for fills them).
  EXPECT_EQ(declines(k, {Shape{2, 4}}), "");
  // Without row terms no row is declined.
  EXPECT_EQ(declines(gated(), {.shape = {1, 4}, .row_scales = {constant}}), "");
}

}  // namespace
}  // namespace normcheck
