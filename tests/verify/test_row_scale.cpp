// row_scales() (verify's row_scale.h): each row's exact sigma^2 and
// |mean|/sigma, the one home of the ratio; and evaluate() declining, before
// running anything, a problem with a row outside its kernel's row terms,
// naming the row and the term, while a problem inside is judged.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/row_scale.h"

namespace normcheck {
namespace {

const Kernel& twopass() {
  const Kernel* k = find_kernel("layernorm_fwd.twopass");
  EXPECT_NE(k, nullptr);
  return *k;
}

TEST(RowScales, ExactStatisticsOfEachRow) {
  // rows: {1, 3} (mean 2, sigma 1), {0, 0} (constant), {NaN, 1}
  const std::vector<float> x = {1, 3, 0, 0, NAN, 1};
  const std::vector<RowScale> s = row_scales(Op::layernorm_fwd, x, 3, 2, 1e-5f);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].scale_square, 1.0);
  EXPECT_EQ(s[0].mean_over_sigma, 2.0);
  EXPECT_TRUE(s[0].finite);
  EXPECT_EQ(s[1].scale_square, 0.0);
  EXPECT_EQ(s[1].mean_over_sigma, INFINITY);
  EXPECT_FALSE(s[2].finite);
  // RMSNorm: mean(x^2), and no |mean|/sigma
  const std::vector<RowScale> r = row_scales(Op::rmsnorm_fwd, x, 3, 2, 1e-5f);
  EXPECT_EQ(r[0].scale_square, 5.0);
  EXPECT_TRUE(std::isnan(r[0].mean_over_sigma));
  // The ratio of a row 1e5 + {-1, 1}: exact, though float32's sum of squares would cancel.
  const std::vector<float> ill = {1e5f - 1, 1e5f + 1};
  EXPECT_EQ(row_scales(Op::layernorm_fwd, ill, 1, 2, 0).front().mean_over_sigma, 1e5);
}

TEST(RowScales, EvaluateDeclinesARowOutsideTheRealisticPreset) {
  Kernel k = twopass();
  k.range = parse_domain("realistic");
  Problem p;
  p.rows = 2;
  p.cols = 4;
  p.eps = 1e-5f;
  p.x = {1, -1, 2, -2, 1e5f, 1e5f + 1, 1e5f - 1, 1e5f};  // row 1: |mean|/sigma = 1.41e5
  const Evaluation declined = evaluate(k, p);
  EXPECT_EQ(declined.declined,
            "row 1: |mean|/sigma = 1.41e+05 is outside the kernel's declared domain |mean|/sigma<=10000");
  p.x = {1, -1, 2, -2, 0x1p-70f, -0x1p-70f, 0, 0};  // row 1: sigma = 2^-70.5
  EXPECT_NE(evaluate(k, p).declined.find("row 1: sigma = "), std::string::npos);
  p.x = {1, -1, 2, -2, 100, 101, 99, 100};  // |mean|/sigma = 141: inside, judged, and the two-pass passes
  const Evaluation judged = evaluate(k, p);
  EXPECT_EQ(judged.declined, "");
  EXPECT_TRUE(judged.pass);
  // The same kernel without the preset judges the ill row (no row terms: no row scales computed).
  EXPECT_TRUE(request_for(twopass(), p).row_scales.empty());
  EXPECT_EQ(request_for(k, p).row_scales.size(), 2u);
}

}  // namespace
}  // namespace normcheck
