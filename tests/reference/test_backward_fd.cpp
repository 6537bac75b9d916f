// The backward references against central finite differences of the forward
// definition, evaluated independently here at ~660 bits with Boost's operators
// (a static-precision mpfr type, so every temporary keeps the precision):
//   L(x, gamma, beta) = sum_rows sum_i dy_i y_i,   dx = dL/dx,  dgamma = dL/dgamma,
//   dbeta = dL/dbeta.
// Error budget of the difference quotient (h = 2^-120 sqrt(var + eps)):
// truncation h^2 |L'''| / 6 ~ 2^-240 of the dx scale, rounding 2^-660 |L| / h
// ~ 2^-540; L is linear in gamma and beta, so there h = 1 is exact. The
// reference's `exact` field is rounded to double (2^-53 of |dx| <= the scale),
// so 2^-50 of the scale the dx/dgamma/dbeta bounds use leaves a factor 4.
//
// How this test fails: a wrong gradient formula (a missing mean(g) term, the
// projection onto xhat with the wrong sign, dgamma without xhat) is off by
// O(1) of the scale.
#include <gtest/gtest.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "normcheck/reference.h"
#include "../support/test_seed.h"

namespace normcheck {
namespace {

using Hp = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<200>>;

constexpr double kTolerance = 0x1p-50;

enum class Norm { layer, rms };

// sum_i dy_i (gamma_i xhat_i + beta_i) for one row, from the definition.
Hp row_loss(const std::vector<Hp>& x, const std::vector<Hp>& gamma, const std::vector<Hp>& beta,
            const std::vector<float>& dy, float eps, Norm norm) {
  const auto d = static_cast<long>(x.size());
  Hp mean = 0;
  for (const Hp& v : x) mean += v;
  mean /= d;
  Hp var = 0;
  for (const Hp& v : x) var += norm == Norm::layer ? Hp((v - mean) * (v - mean)) : Hp(v * v);
  var /= d;
  const Hp r = 1 / sqrt(var + Hp(eps));
  Hp loss = 0;
  for (long i = 0; i < d; ++i) {
    const Hp xhat = norm == Norm::layer ? Hp((x[i] - mean) * r) : Hp(x[i] * r);
    loss += Hp(dy[i]) * (gamma[i] * xhat + beta[i]);
  }
  return loss;
}

std::vector<Hp> to_hp(std::span<const float> v) { return {v.begin(), v.end()}; }

struct Problem {
  int64_t rows, cols;
  std::vector<float> x, dy, gamma, beta;
  float eps;
};

void check_against_finite_differences(const Problem& p, Norm norm) {
  const auto cols = p.cols;
  std::vector<double> dx(p.x.size()), scale(p.x.size()), dgamma, dbeta, dgamma_scale, dbeta_scale;
  if (norm == Norm::layer) {
    const auto ref = reference_layernorm_bwd(p.dy, p.x, p.gamma, p.rows, cols, p.eps);
    dx = ref.dx.exact;
    dgamma = ref.dgamma.exact;
    dbeta = ref.dbeta.exact;
    dgamma_scale = ref.sum_abs_dy_xhat;
    dbeta_scale = ref.sum_abs_dy;
    for (int64_t i = 0; i < p.rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        scale[i * cols + j] =
            ref.stats[i].r * (std::fabs(double{p.gamma[j]} * p.dy[i * cols + j]) +
                              ref.mean_abs_g[i] +
                              std::fabs(ref.xhat.exact[i * cols + j]) * ref.mean_abs_g_xhat[i]);
  } else {
    const auto ref = reference_rmsnorm_bwd(p.dy, p.x, p.gamma, p.rows, cols, p.eps);
    dx = ref.dx.exact;
    dgamma = ref.dgamma.exact;
    dgamma_scale = ref.sum_abs_dy_xhat;
    for (int64_t i = 0; i < p.rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        scale[i * cols + j] =
            ref.stats[i].r * (std::fabs(double{p.gamma[j]} * p.dy[i * cols + j]) +
                              std::fabs(ref.xhat.exact[i * cols + j]) * ref.mean_abs_g_xhat[i]);
  }

  std::vector<Hp> gamma = to_hp(p.gamma);
  std::vector<Hp> beta = norm == Norm::layer ? to_hp(p.beta) : std::vector<Hp>(cols, Hp(0));
  std::vector<Hp> dgamma_fd(cols, Hp(0)), dbeta_fd(cols, Hp(0));
  for (int64_t i = 0; i < p.rows; ++i) {
    const std::span<const float> xr(p.x.data() + i * cols, cols);
    const std::vector<float> dyr(p.dy.begin() + i * cols, p.dy.begin() + (i + 1) * cols);
    std::vector<Hp> x = to_hp(xr);
    Hp mean = 0, var = 0;
    for (const Hp& v : x) mean += v;
    mean /= cols;
    for (const Hp& v : x) var += norm == Norm::layer ? Hp((v - mean) * (v - mean)) : Hp(v * v);
    var /= cols;
    const Hp h = ldexp(sqrt(var + Hp(p.eps)), -120);
    for (int64_t j = 0; j < cols; ++j) {
      const Hp saved = x[j];
      x[j] = saved + h;
      const Hp up = row_loss(x, gamma, beta, dyr, p.eps, norm);
      x[j] = saved - h;
      const Hp down = row_loss(x, gamma, beta, dyr, p.eps, norm);
      x[j] = saved;
      const double fd = static_cast<double>((up - down) / (2 * h));
      EXPECT_LE(std::fabs(dx[i * cols + j] - fd), kTolerance * scale[i * cols + j])
          << "dx[" << i << "][" << j << "]: reference " << dx[i * cols + j] << ", finite difference "
          << fd;
      // Linear in gamma_j and beta_j: a unit step gives the exact derivative.
      for (auto* param : {&gamma, &beta}) {
        const Hp kept = (*param)[j];
        (*param)[j] = kept + 1;
        const Hp hi = row_loss(x, gamma, beta, dyr, p.eps, norm);
        (*param)[j] = kept - 1;
        const Hp lo = row_loss(x, gamma, beta, dyr, p.eps, norm);
        (*param)[j] = kept;
        (param == &gamma ? dgamma_fd : dbeta_fd)[j] += (hi - lo) / 2;
      }
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    EXPECT_LE(std::fabs(dgamma[j] - static_cast<double>(dgamma_fd[j])), kTolerance * dgamma_scale[j])
        << "dgamma[" << j << "]";
    if (norm == Norm::layer) {
      EXPECT_LE(std::fabs(dbeta[j] - static_cast<double>(dbeta_fd[j])), kTolerance * dbeta_scale[j])
          << "dbeta[" << j << "]";
    }
  }
}

class ReferenceBackward : public ::testing::TestWithParam<Norm> {};

TEST_P(ReferenceBackward, MatchesFiniteDifferencesOfTheForward) {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<float> normal(0, 1);
  int problems = 0;
  for (int64_t cols : {2, 3, 5, 8}) {
    for (float offset : {0.0f, 3.0f, 1e4f}) {
      for (float eps : {0.0f, 1e-5f, 0.5f}) {
        Problem p{3, cols, {}, {}, {}, {}, eps};
        for (int64_t k = 0; k < p.rows * cols; ++k) {
          p.x.push_back(offset + normal(rng));
          p.dy.push_back(normal(rng));
        }
        for (int64_t k = 0; k < cols; ++k) {
          p.gamma.push_back(normal(rng));
          p.beta.push_back(normal(rng));
        }
        SCOPED_TRACE(std::string("cols ") + std::to_string(cols) + ", offset " + std::to_string(offset) +
                     ", eps " + std::to_string(eps));
        check_against_finite_differences(p, GetParam());
        ++problems;
      }
    }
  }
  EXPECT_EQ(problems, 36);
}

INSTANTIATE_TEST_SUITE_P(Norms, ReferenceBackward, ::testing::Values(Norm::layer, Norm::rms),
                         [](const auto& info) {
                           return info.param == Norm::layer ? "LayerNorm" : "RMSNorm";
                         });

}  // namespace
}  // namespace normcheck
