// layernorm_fwd.accurate: within 1 ULP of the exact y (gamma = 1, beta = 0)
// whatever |mean| / sigma, on every target; what docs/accuracy_accurate.md
// proves. The fast kernel on the same rows is the negative control: the ULP
// check does fail a kernel whose float mean drops the low bits of x - mean.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../reference/test_seed.h"
#include "simd_test_support.h"

namespace normcheck {
namespace {

const Kernel& kernel(std::string_view name) {
  const Kernel* k = find_kernel(name);
  EXPECT_NE(k, nullptr) << name;
  return *k;
}

// rows x d of scale * (center + N(0,1)).
Problem shifted_rows(double center, double scale, int64_t rows, int64_t d, float eps,
                     std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Problem p;
  p.rows = rows;
  p.cols = d;
  p.eps = eps;
  p.misalign_floats = 1;
  for (int64_t i = 0; i < rows * d; ++i)
    p.x.push_back(static_cast<float>(scale * (center + normal(rng))));
  return p;
}

// |mean|/sigma from 0 to 1e7 (the range), d = 768 and 4096.
TEST(LayerNormAccurate, WithinOneUlpWhateverTheMeanOverSigma) {
  const uint64_t seed = test::test_seed();
  test::for_each_target([&](const char* target) {
    std::mt19937_64 rng(seed);
    for (const int64_t d : {768, 4096}) {
      for (const double center : {0.0, 1e3, 1e4, 1e5, 1e6, 1e7}) {
        const Evaluation e = evaluate(kernel("layernorm_fwd.accurate"),
                                      shifted_rows(center, 1.0, 2, d, 1e-5f, rng));
        EXPECT_TRUE(e.pass) << target << " d " << d << " center " << center << ": "
                            << test::describe(e);
        EXPECT_LE(e.max_ulp, 1.0) << target << " d " << d << " center " << center << ": "
                                  << test::describe(e);
      }
    }
  });
}

// The corners the proof covers without exception: eps far above sigma^2,
// rows near the bottom and the top of the float range (eps = 0: y does not
// depend on the scale), float-overflowing squares, mixed magnitudes.
TEST(LayerNormAccurate, WithinOneUlpOnTheCorners) {
  std::mt19937_64 rng(test::test_seed());
  const Kernel& accurate = kernel("layernorm_fwd.accurate");
  struct Case {
    const char* what;
    Problem p;
  };
  std::vector<Case> cases = {
      {"eps = 1e4 sigma^2", shifted_rows(1e4, 1.0, 2, 1000, 1e4f, rng)},
      {"tiny rows, eps 0", shifted_rows(50, 0x1p-120, 2, 1000, 0.0f, rng)},
      {"huge rows, eps 0", shifted_rows(50, 0x1p100, 2, 1000, 0.0f, rng)},
      {"squares overflow float", shifted_rows(0, 1e30, 2, 1000, 1e-5f, rng)},
  };
  Problem mixed;
  mixed.rows = 2;
  mixed.cols = 1000;
  std::uniform_real_distribution<double> exponent(-30, 30);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 2000; ++i)
    mixed.x.push_back(static_cast<float>(normal(rng) * std::pow(10.0, exponent(rng))));
  cases.push_back({"magnitudes 1e-30 .. 1e30", mixed});
  for (const Case& c : cases) {
    const Evaluation e = evaluate(accurate, c.p);
    EXPECT_TRUE(e.pass) << c.what << ": " << test::describe(e);
    EXPECT_LE(e.max_ulp, 1.0) << c.what << ": " << test::describe(e);
  }
}

TEST(LayerNormAccurate, NegativeControlFastKernelIsNotWithinOneUlp) {
  std::mt19937_64 rng(test::test_seed());
  const Evaluation e =
      evaluate(kernel("layernorm_fwd.hwy"), shifted_rows(1e4, 1.0, 2, 4096, 1e-5f, rng));
  EXPECT_TRUE(e.pass) << "the fast kernel meets its own (kappa-dependent) bound: "
                      << test::describe(e);
  EXPECT_GT(e.max_ulp, 1.0) << "a float mean at |mean|/sigma = 1e4 loses bits of x - mean";
}

}  // namespace
}  // namespace normcheck
