// layernorm_fwd.accurate: within 1 ULP of the exact y (gamma = 1, beta = 0)
// whatever |mean| / sigma, on every target; what docs/accuracy_accurate.md
// proves: every element with |y| >= T (T from the kernel's own Bound, about
// 2^-19 at d = 4096) within 1 ULP, every element within the Bound (evaluate()).
// The fast kernel on the same rows is the negative control: the ULP check
// does fail a kernel whose float mean drops the low bits of x - mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <variant>

#include "normcheck/metrics.h"
#include "normcheck/reference.h"

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

struct UlpAboveThreshold {
  double max_ulp = 0;       // over the elements with |y| >= T
  int64_t below = 0;        // elements with |y| < T (held to the Bound only)
  double max_ulp_all = 0;   // over every element, for the log
};

// Runs `k` (no gamma/beta) and measures y's ULP error against the exact y over
// the elements the 1-ULP theorem covers: |y| >= T = xhat_abs / (2^-26 - eta),
// eta = xhat_rel + affine_rel - 2^-24 (the error before the final rounding;
// docs/accuracy_accurate.md, "From the absolute form to ULPs"), T from the
// kernel's Bound at the row's exact condition.
UlpAboveThreshold ulp_above_threshold(const Kernel& k, const Problem& p) {
  std::vector<float> y(p.x.size());
  std::get<nc_layernorm_fwd_fn>(k.fn)(p.x.data(), nullptr, nullptr, y.data(), nullptr, nullptr,
                                      p.rows, p.cols, p.eps);
  const LayerNormFwdReference ref = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
  UlpAboveThreshold out;
  for (int64_t row = 0; row < p.rows; ++row) {
    const Bound b = k.bound(row_condition(ref.stats[static_cast<size_t>(row)]));
    const double threshold = b.xhat_abs / (0x1p-26 - (b.xhat_rel + b.affine_rel - 0x1p-24));
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<size_t>(row * p.cols + col);
      const double ulp = ulp_error(y[i], ref.y.exact[i]);
      out.max_ulp_all = std::max(out.max_ulp_all, ulp);
      if (std::abs(ref.y.exact[i]) >= threshold)
        out.max_ulp = std::max(out.max_ulp, ulp);
      else
        ++out.below;
    }
  }
  return out;
}

// |mean|/sigma from 0 to 1e7 (the range), d = 768 and 4096.
TEST(LayerNormAccurate, WithinOneUlpWhateverTheMeanOverSigma) {
  const uint64_t seed = test::test_seed();
  test::for_each_target([&](const char* target) {
    std::mt19937_64 rng(seed);
    for (const int64_t d : {768, 4096}) {
      for (const double center : {0.0, 1e3, 1e4, 1e5, 1e6, 1e7}) {
        const Kernel& accurate = kernel("layernorm_fwd.accurate");
        const Problem p = shifted_rows(center, 1.0, 2, d, 1e-5f, rng);
        const Evaluation e = evaluate(accurate, p);
        EXPECT_TRUE(e.pass) << target << " d " << d << " center " << center << ": "
                            << test::describe(e);
        const UlpAboveThreshold u = ulp_above_threshold(accurate, p);
        EXPECT_LE(u.max_ulp, 1.0) << target << " d " << d << " center " << center << ": "
                                  << u.below << " elements below T, max ulp of all "
                                  << u.max_ulp_all << "; " << test::describe(e);
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
    const UlpAboveThreshold u = ulp_above_threshold(accurate, c.p);
    EXPECT_LE(u.max_ulp, 1.0) << c.what << ": " << u.below << " elements below T, max ulp of all "
                              << u.max_ulp_all << "; " << test::describe(e);
  }
}

TEST(LayerNormAccurate, NegativeControlFastKernelIsNotWithinOneUlp) {
  std::mt19937_64 rng(test::test_seed());
  const Problem p = shifted_rows(1e4, 1.0, 2, 4096, 1e-5f, rng);
  const Evaluation e = evaluate(kernel("layernorm_fwd.hwy"), p);
  EXPECT_TRUE(e.pass) << "the fast kernel meets its own (kappa-dependent) bound: "
                      << test::describe(e);
  // The same measure as above, with T taken from the accurate kernel's Bound.
  const Kernel& accurate = kernel("layernorm_fwd.accurate");
  Kernel fast_with_accurate_threshold = kernel("layernorm_fwd.hwy");
  fast_with_accurate_threshold.bound = accurate.bound;
  EXPECT_GT(ulp_above_threshold(fast_with_accurate_threshold, p).max_ulp, 1.0)
      << "a float mean at |mean|/sigma = 1e4 loses bits of x - mean";
}

}  // namespace
}  // namespace normcheck
