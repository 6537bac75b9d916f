// The hand-written backward of verify/claims/transformer.cpp against central
// finite differences, and the first-order step size of model_update.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "model_update.h"
#include "monte_carlo.h"
#include "transformer.h"
#include "test_seed.h"

namespace nt = normcheck::transformer;

namespace {

uint64_t test_seed() {
  return normcheck::test::fixed_seed(20261121);
}

nt::Matrix& weight(nt::Layer& layer, int which) {
  nt::Matrix* all[] = {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w1, &layer.w2};
  return *all[which];
}

double loss(const nt::Stack& stack, const nt::Matrix& x, const nt::Matrix& r) {
  return nt::forward_states(stack, x).back().cwiseProduct(r).sum();
}

struct Mismatch {
  int checked = 0, failed = 0;
};

// Compares every sampled entry of `grads` with the central difference
// D(h) = (L(w + h) - L(w - h)) / 2h. Its error is rounding, at most about
// 10 u |L|max / h (u = 2^-53; |L| <= ||F|| ||R|| = sqrt(n d) since every LN
// output row has norm sqrt(d) and ||R|| = 1; 10 covers the few roundings of the
// final sum), plus truncation c h^2, which is estimated from the data as
// |D(2h) - D(h)| (= 3 c h^2 to leading order, so it over-covers c h^2 by 3x).
Mismatch compare(const nt::Stack& stack, const std::vector<nt::Layer>& grads,
                 const nt::Matrix& x, const nt::Matrix& r, std::mt19937_64& rng) {
  const double h = 1e-5;
  const double loss_scale = std::sqrt(static_cast<double>(x.size()));
  const double rounding = 10 * 0x1p-53 * loss_scale / h;
  Mismatch out;
  for (std::size_t l = 0; l < stack.layers.size(); ++l) {
    for (int which = 0; which < 6; ++which) {
      nt::Layer probe = stack.layers[l];
      const nt::Matrix& w = weight(probe, which);
      std::uniform_int_distribution<Eigen::Index> row(0, w.rows() - 1), col(0, w.cols() - 1);
      for (int k = 0; k < 4; ++k) {
        const Eigen::Index i = row(rng), j = col(rng);
        auto central = [&](double step) {
          nt::Stack plus = stack, minus = stack;
          weight(plus.layers[l], which)(i, j) += step;
          weight(minus.layers[l], which)(i, j) -= step;
          return (loss(plus, x, r) - loss(minus, x, r)) / (2 * step);
        };
        const double d1 = central(h), d2 = central(2 * h);
        const double tolerance = rounding + std::abs(d2 - d1);
        const double analytic = weight(const_cast<nt::Layer&>(grads[l]), which)(i, j);
        ++out.checked;
        if (std::abs(analytic - d1) > tolerance) ++out.failed;
      }
    }
  }
  return out;
}

struct StackProblem {
  nt::Stack stack;
  nt::Matrix x, r;
};

StackProblem small_setup(bool causal, nt::Residual residual, uint64_t seed) {
  nt::Shape shape;
  shape.layers = 2;
  shape.width = 16;
  shape.heads = 4;
  shape.ffn = 32;
  shape.tokens = 6;
  shape.causal = causal;
  std::mt19937_64 rng = normcheck::claims_mc::seeded_rng(seed, 1);
  StackProblem s{nt::init_stack(shape, residual, rng), nt::normalized_input(shape, rng), {}};
  s.r = nt::normalized_input(shape, rng);
  s.r /= s.r.norm();
  return s;
}

// `check` on each small stack: causal or not, with the plain residual and
// DeepNorm's (N = 2), named in failure messages.
template <class Check>
void for_each_small_stack(uint64_t seed, const Check& check) {
  for (bool causal : {false, true})
    for (nt::Residual residual : {nt::Residual{1, 1}, nt::deepnorm_encoder(2)})
      check(small_setup(causal, residual, seed),
            "causal " + std::to_string(causal) + " alpha " + std::to_string(residual.alpha));
}

// The negative controls' stack: DeepNorm's N = 2 with alpha off by 1e-3 (a
// plausible bug: alpha dropped from one term), and the correct one.
struct WrongAlpha {
  StackProblem right;
  nt::Stack wrong;
};

WrongAlpha wrong_alpha_setup(uint64_t seed) {
  WrongAlpha w{small_setup(false, nt::deepnorm_encoder(2), seed), {}};
  w.wrong = w.right.stack;
  w.wrong.alpha *= 1 + 1e-3;
  return w;
}

// The first-order change of the loss under one update of N = 8 layers, alone
// (no finite or Adam step), with `small_step` the finite step of eta = 1e-6 too.
normcheck::claims_deepnorm::UpdateMeasurement first_order_update(nt::Residual residual, uint64_t seed,
                                                                 bool small_step = false) {
  nt::Shape shape;
  shape.layers = 8;
  normcheck::claims_deepnorm::UpdateOptions options;
  options.finite_step = options.adam_step = false;
  options.small_step = small_step;
  return normcheck::claims_deepnorm::measure_update(shape, residual, seed, options);
}

}  // namespace

TEST(JTransformer, BackwardMatchesCentralDifferences) {
  const uint64_t seed = test_seed();
  for_each_small_stack(seed, [&](const StackProblem& s, const std::string& what) {
    const auto grads = nt::backward(s.stack, nt::forward_states(s.stack, s.x), s.r);
    std::mt19937_64 rng = normcheck::claims_mc::seeded_rng(seed, 2);
    const Mismatch m = compare(s.stack, grads, s.x, s.r, rng);
    EXPECT_EQ(m.failed, 0) << what << ": " << m.failed << " of " << m.checked << " entries";
  });
}

// Negative control: the gradient of a stack whose residual scale is off by
// 1e-3 must fail the comparison.
TEST(JTransformer, FiniteDifferenceCheckCatchesWrongAlpha) {
  const uint64_t seed = test_seed();
  const WrongAlpha w = wrong_alpha_setup(seed);
  const StackProblem& s = w.right;
  const auto grads = nt::backward(w.wrong, nt::forward_states(w.wrong, s.x), s.r);
  std::mt19937_64 rng = normcheck::claims_mc::seeded_rng(seed, 2);
  const Mismatch m = compare(s.stack, grads, s.x, s.r, rng);
  EXPECT_GT(m.failed, m.checked / 2);
}

// The forward-mode derivative (forward_tangents) of F in the direction of the
// gradient, entry by entry against the central difference of F along that
// direction. Tolerance as in compare(): rounding 10 u max|F| / h with
// max|F| <= sqrt(d) (an LN output row has norm sqrt(d)), plus the truncation
// estimate |D(2h) - D(h)|.
int tangent_mismatches(const nt::Stack& stack, const nt::Stack& tangent_stack, const nt::Matrix& x,
                       const std::vector<nt::Layer>& direction) {
  const double h = 1e-5;
  const double rounding = 10 * 0x1p-53 * std::sqrt(static_cast<double>(x.cols())) / h;
  auto moved = [&](double step) { return nt::forward_states(stack, x, {&direction, step, false}).back(); };
  const nt::Matrix d1 = (moved(h) - moved(-h)) / (2 * h);
  const nt::Matrix d2 = (moved(2 * h) - moved(-2 * h)) / (4 * h);
  const nt::Matrix jvp =
      nt::forward_tangents(tangent_stack, nt::forward_states(tangent_stack, x), direction, 1.0).back();
  int failed = 0;
  for (Eigen::Index i = 0; i < jvp.size(); ++i)
    failed += std::abs(jvp.data()[i] - d1.data()[i]) > rounding + std::abs(d2.data()[i] - d1.data()[i]);
  return failed;
}

TEST(JTransformer, TangentMatchesCentralDifferences) {
  for_each_small_stack(test_seed(), [](const StackProblem& s, const std::string& what) {
    const auto grads = nt::backward(s.stack, nt::forward_states(s.stack, s.x), s.r);
    EXPECT_EQ(tangent_mismatches(s.stack, s.stack, s.x, grads), 0) << what;
  });
}

// Negative control: the tangent of a stack whose alpha is off by 1e-3 fails the
// same comparison in most entries.
TEST(JTransformer, TangentCheckCatchesWrongAlpha) {
  const WrongAlpha w = wrong_alpha_setup(test_seed());
  const StackProblem& s = w.right;
  const auto grads = nt::backward(s.stack, nt::forward_states(s.stack, s.x), s.r);
  EXPECT_GT(tangent_mismatches(s.stack, w.wrong, s.x, grads), s.x.size() / 2);
}

// With L = <R, F>, the JVP in the direction -g and the backward's g are tied by
// <R, J(-g)> = -||g||^2 exactly. In float64 both sides are sums of products
// through 2N sublayers of ~10 matrix products each (inner dimension <= 4d = 256):
// the classical bound n u per product gives ~256 * 1.1e-16 = 3e-14 relative per
// product, about 5e-12 over N = 8; 1e-10 leaves a factor 20 for cancellation.
// A wrong residual scale in one of the two (1e-3) is caught by far.
TEST(JTransformer, TangentAndGradientAgreeOnTheLoss) {
  const uint64_t seed = test_seed();
  for (nt::Residual residual : {nt::Residual{1, 1}, nt::deepnorm_encoder(8)}) {
    const auto m = first_order_update(residual, seed);
    EXPECT_NEAR(-m.loss_change / m.gradient_squared, 1.0, 1e-10) << "alpha " << residual.alpha;
    // Cauchy-Schwarz, ||R|| = 1: ||dF|| >= |<R, dF>| = ||g||^2.
    EXPECT_GE(m.sgd_per_eta, m.gradient_squared * (1 - 1e-10));
  }
  StackProblem s = small_setup(false, nt::deepnorm_encoder(2), seed);
  nt::Stack wrong = s.stack;
  wrong.alpha *= 1 + 1e-3;
  const auto grads = nt::backward(s.stack, nt::forward_states(s.stack, s.x), s.r);
  double g2 = 0;
  for (int sub = 0; sub < 4; ++sub) g2 += std::pow(nt::sublayer_norm(grads, sub), 2);
  const nt::Matrix jvp = nt::forward_tangents(wrong, nt::forward_states(wrong, s.x), grads, -1.0).back();
  EXPECT_GT(std::abs(-jvp.cwiseProduct(s.r).sum() / g2 - 1), 1e-10);
}

// A finite step of eta = 1e-6 agrees with the exact first-order value (JVP) to
// 1e-3 relative on Post-LN at N = 8 (the relative gap is the second-order term
// ~eta ||d2F||/||dF||; the J7 sweep measures a median of 1.2e-4 at N = 8 and
// 1.1e-3 at N = 16, so 1e-3 has an 8x margin at N = 8). A JVP that missed a
// term would be off by far more.
TEST(JTransformer, SmallStepMatchesTheJvpAtModerateDepth) {
  const auto m = first_order_update({1, 1}, test_seed(), /*small_step=*/true);
  EXPECT_NEAR(m.sgd_small_per_eta / m.sgd_per_eta, 1.0, 1e-3);
}
