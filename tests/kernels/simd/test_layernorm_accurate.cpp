// layernorm_fwd.accurate: within 1 ULP of the exact y (gamma = 1, beta = 0)
// for every element of every finite row, whatever |mean| / sigma, on every
// target: what docs/accuracy_accurate.md proves. The rows include elements so
// near the mean that the float64 tier alone cannot promise it (the exact tier
// computes them; the tests check such elements are present), subnormal
// outputs, and rows whose first elements are far from the mean (a second
// centring pass). The fast kernel on shifted rows is the negative control:
// the ULP check does fail a kernel whose float mean drops the low bits of
// x - mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "normcheck/metrics.h"
#include "normcheck/reference.h"
#include "normcheck/invoke.h"

#include "test_seed.h"
#include "simd/hwy_bounds.h"
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

// The threshold of the exact tier with the most float64 lanes the kernel uses
// (4: AVX2, and AVX-512 capped at 256 bits): the smallest any target uses.
// An element with |xhat| below half of it has a computed |xhat| below the
// threshold on every target (the float64 tier is off by far less than that),
// so the exact tier computes it.
double smallest_exact_tier_threshold(int64_t d) { return simd::accurate_exact_below(d, 4); }

struct UlpCheck {
  double max_ulp = 0;          // over every element of y
  int64_t exact_tier = 0;      // elements with |xhat| < smallest_exact_tier_threshold / 2
  double worst_exact = 0;      // the exact y of the element with max_ulp
};

// Runs `k` (no gamma/beta) and measures y's ULP error against the exact y.
UlpCheck ulp_check(const Kernel& k, const Problem& p) {
  std::vector<float> y(p.x.size());
  invoke(k, {.rows = p.rows, .cols = p.cols, .eps = p.eps, .x = p.x.data(), .out = y.data()});
  const LayerNormFwdReference ref = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
  UlpCheck out;
  const double exact_tier_below = smallest_exact_tier_threshold(p.cols) / 2;
  for (size_t i = 0; i < y.size(); ++i) {
    const double ulp = ulp_error(y[i], ref.y.exact[i]);
    if (ulp > out.max_ulp) {
      out.max_ulp = ulp;
      out.worst_exact = ref.y.exact[i];
    }
    if (std::abs(ref.xhat.exact[i]) < exact_tier_below) ++out.exact_tier;
  }
  return out;
}

std::string describe(const UlpCheck& u) {
  std::ostringstream out;
  out << "max ulp " << u.max_ulp << " (exact y " << u.worst_exact << "), " << u.exact_tier
      << " elements in the exact tier's range";
  return out.str();
}

// Sets x[row * d + col] to the float nearest the mean of the row's other
// elements: then x - mean is a fraction of one ulp of x over d, far below
// what float64 sums resolve once |mean| is large against that ulp.
void put_element_at_mean(Problem& p, int64_t row, int64_t col) {
  const int64_t d = p.cols;
  long double others = 0;  // 64-bit mantissa: the sum of d <= 2^20 floats of similar size, near enough
  for (int64_t j = 0; j < d; ++j)
    if (j != col) others += p.x[static_cast<size_t>(row * d + j)];
  p.x[static_cast<size_t>(row * d + col)] = static_cast<float>(others / static_cast<long double>(d - 1));
}

// |mean|/sigma from 0 to 1e7 (where float's x - mean keeps less than one bit), d = 768 and 4096; in each
// row a few elements are put at the mean.
class LayerNormAccurate : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(LayerNormAccurate);

TEST_P(LayerNormAccurate, WithinOneUlpWhateverTheMeanOverSigma) {
  const uint64_t seed = test::test_seed();
  const Kernel& accurate = kernel("layernorm_fwd.accurate");
  {
    const char* target = this->target();
    std::mt19937_64 rng(seed);
    // Only small |mean|/sigma lets an element come this near the mean: at
    // |mean| >> sigma the float grid near the mean is coarser than that.
    int64_t exact_tier = 0;
    for (const int64_t d : {768, 4096}) {
      for (const double center : {0.0, 1e3, 1e4, 1e5, 1e6, 1e7}) {
        Problem p = shifted_rows(center, 1.0, 2, d, 1e-5f, rng);
        for (int64_t row = 0; row < p.rows; ++row)
          for (const int64_t col : {int64_t{5}, d / 2, d - 1}) put_element_at_mean(p, row, col);
        const Evaluation e = evaluate(accurate, p);
        EXPECT_TRUE(e.pass) << target << " d " << d << " center " << center << ": "
                            << test::describe(e);
        const UlpCheck u = ulp_check(accurate, p);
        EXPECT_LE(u.max_ulp, 1.0) << target << " d " << d << " center " << center << ": "
                                  << describe(u);
        exact_tier += u.exact_tier;
      }
    }
    EXPECT_GT(exact_tier, 0) << target << ": no element near the mean, the exact tier is not tested";
  }
}

// Rows of +-a pairs that cancel exactly plus a tiny t: the mean is t/d, and
// the elements t and 0 have |y| ~ t / a (subnormal for a = 1e20, t = 1e-25).
Problem cancelling_pairs(int64_t d, float a, float t, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> spread(0.5f, 2.0f);
  Problem p;
  p.rows = 1;
  p.cols = d;
  p.eps = 0;
  for (int64_t i = 0; i + 3 < d; i += 2) {
    const float v = a * spread(rng);
    p.x.push_back(v);
    p.x.push_back(-v);
  }
  p.x.push_back(0);
  p.x.push_back(t);
  while (static_cast<int64_t>(p.x.size()) < d) p.x.push_back(0);
  return p;
}

// The corners the proof covers without exception: eps far above sigma^2,
// rows near the bottom and the top of the float range (eps = 0: y does not
// depend on the scale), float-overflowing squares, mixed magnitudes,
// subnormal outputs, elements exactly at the mean, rows whose first elements
// are far from the mean.
TEST_P(LayerNormAccurate, WithinOneUlpOnTheCorners) {
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
      {"subnormal outputs", cancelling_pairs(1000, 1e20f, 1e-25f, rng)},
      {"outputs below the subnormals", cancelling_pairs(1000, 1e20f, 1e-35f, rng)},
      // The mean is t/d alone and t is too small for the kernel's two-sum
      // split: the exact sum element by element.
      {"a mean made of an element 2^-80 below the rest", cancelling_pairs(1000, 1.0f, 0x1p-80f, rng)},
  };
  Problem mixed;
  mixed.rows = 2;
  mixed.cols = 1000;
  std::uniform_real_distribution<double> exponent(-30, 30);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 2000; ++i)
    mixed.x.push_back(static_cast<float>(normal(rng) * std::pow(10.0, exponent(rng))));
  cases.push_back({"magnitudes 1e-30 .. 1e30", mixed});
  // 1, 2, ..., 999: the middle element is exactly the mean, its y exactly 0.
  Problem at_mean;
  at_mean.rows = 1;
  at_mean.cols = 999;
  for (int i = 1; i <= 999; ++i) at_mean.x.push_back(static_cast<float>(1e4 + i));
  cases.push_back({"sorted row, an element exactly at the mean", at_mean});
  // The first 64 elements (the kernel's first centre) far above the rest.
  Problem far_prefix = shifted_rows(0, 1.0, 1, 4096, 1e-5f, rng);
  std::fill_n(far_prefix.x.begin(), 64, 1e6f);
  cases.push_back({"first elements far from the mean", far_prefix});
  for (const Case& c : cases) {
    const Evaluation e = evaluate(accurate, c.p);
    EXPECT_TRUE(e.pass) << c.what << ": " << test::describe(e);
    EXPECT_LE(ulp_check(accurate, c.p).max_ulp, 1.0) << c.what << ": " << describe(ulp_check(accurate, c.p));
  }
  std::vector<float> y(999);
  invoke(accurate, {.rows = 1, .cols = 999, .eps = 1e-5f, .x = at_mean.x.data(), .out = y.data()});
  EXPECT_EQ(y[499], 0.0f) << "x = mean exactly gives y = 0 exactly";
}

TEST(LayerNormAccurateControl, FastKernelIsNotWithinOneUlp) {
  std::mt19937_64 rng(test::test_seed());
  const Problem p = shifted_rows(1e4, 1.0, 2, 4096, 1e-5f, rng);
  const Kernel& fast = kernel("layernorm_fwd.hwy");
  const Evaluation e = evaluate(fast, p);
  EXPECT_TRUE(e.pass) << "the fast kernel meets its own (kappa-dependent) bound: "
                      << test::describe(e);
  const UlpCheck u = ulp_check(fast, p);
  EXPECT_GT(u.max_ulp, 1.0) << "a float mean at |mean|/sigma = 1e4 loses bits of x - mean: " << describe(u);
}

}  // namespace
}  // namespace normcheck
