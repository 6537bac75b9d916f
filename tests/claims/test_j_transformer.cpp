// The hand-written backward of verify/claims/transformer.cpp against central
// finite differences, and the first-order step size of model_update.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "model_update.h"
#include "monte_carlo.h"
#include "transformer.h"

namespace nt = normcheck::transformer;

namespace {

uint64_t test_seed() {
  const char* env = std::getenv("NORMCHECK_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 20261121;
  std::printf("NORMCHECK_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
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

}  // namespace

TEST(JTransformer, BackwardMatchesCentralDifferences) {
  const uint64_t seed = test_seed();
  for (bool causal : {false, true}) {
    for (nt::Residual residual : {nt::Residual{1, 1}, nt::deepnorm_encoder(2)}) {
      StackProblem s = small_setup(causal, residual, seed);
      const auto grads = nt::backward(s.stack, nt::forward_states(s.stack, s.x), s.r);
      std::mt19937_64 rng = normcheck::claims_mc::seeded_rng(seed, 2);
      const Mismatch m = compare(s.stack, grads, s.x, s.r, rng);
      EXPECT_EQ(m.failed, 0) << "causal " << causal << " alpha " << residual.alpha << ": " << m.failed
                             << " of " << m.checked << " entries";
    }
  }
}

// Negative control: the gradient of a stack whose residual scale is off by
// 1e-3 (a plausible bug: alpha dropped from one term) must fail the comparison.
TEST(JTransformer, FiniteDifferenceCheckCatchesWrongAlpha) {
  const uint64_t seed = test_seed();
  StackProblem s = small_setup(false, nt::deepnorm_encoder(2), seed);
  nt::Stack wrong = s.stack;
  wrong.alpha *= 1 + 1e-3;
  const auto grads = nt::backward(wrong, nt::forward_states(wrong, s.x), s.r);
  std::mt19937_64 rng = normcheck::claims_mc::seeded_rng(seed, 2);
  const Mismatch m = compare(s.stack, grads, s.x, s.r, rng);
  EXPECT_GT(m.failed, m.checked / 2);
}

// model_update.h's eta = 1e-6 is first order: the same measurement at eta/10
// agrees to 1e-3 relative on the most curved stack of the J7 default sweep
// (Post-LN, whose update is largest).
TEST(JTransformer, FirstOrderEtaIsLinear) {
  const uint64_t seed = test_seed();
  nt::Shape shape;
  shape.layers = 8;
  normcheck::claims_deepnorm::UpdateOptions options;
  options.finite_step = options.adam_step = false;
  const double at_eta = normcheck::claims_deepnorm::measure_update(shape, {1, 1}, seed, options).sgd_per_eta;
  options.first_order_eta /= 10;
  const double at_tenth = normcheck::claims_deepnorm::measure_update(shape, {1, 1}, seed, options).sgd_per_eta;
  EXPECT_NEAR(at_eta / at_tenth, 1.0, 1e-3);
}
