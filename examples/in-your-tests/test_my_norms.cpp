// GoogleTest: the kernel held to the exact reference with normcheck's default
// bound on hand-picked problems.
#include <normcheck/gtest.h>

#include <cmath>

#include "my_norms.h"

#ifdef MY_NORMS_BROKEN
#define my_layernorm_fwd my_layernorm_fwd_onepass
#endif

namespace {

// rows x cols of c + (a deterministic spread in [-1, 1]).
normcheck::Problem shifted(int64_t rows, int64_t cols, float c) {
  normcheck::Problem p;
  p.rows = rows;
  p.cols = cols;
  for (int64_t i = 0; i < rows * cols; ++i) p.x.push_back(c + std::sin(static_cast<float>(i) * 0.7f));
  return p;
}

TEST(MyNorms, CentredRows) { EXPECT_NORM_WITHIN_BOUND(my_layernorm_fwd, shifted(4, 768, 0.0f)); }

// |mean|/sigma ~ 1e4: where E[x^2] - E[x]^2 loses every digit.
TEST(MyNorms, ShiftedRows) { EXPECT_NORM_WITHIN_BOUND(my_layernorm_fwd, shifted(2, 1024, 1e4f)); }

TEST(MyNorms, AffineAndOddWidth) {
  normcheck::Problem p = shifted(3, 1001, 3.0f);
  p.gamma.assign(1001, 0.5f);
  p.beta.assign(1001, -2.0f);
  EXPECT_NORM_WITHIN_BOUND(my_layernorm_fwd, p);
}

}  // namespace
