#include "model_update.h"

#include <algorithm>
#include <cmath>

#include "monte_carlo.h"

namespace normcheck::claims_deepnorm {

using transformer::Matrix;

bool stays_bounded(const std::vector<double>& per_eta, double max_spread) {
  const auto [lo, hi] = std::minmax_element(per_eta.begin(), per_eta.end());
  return lo != per_eta.end() && *lo > 0 && *hi / *lo <= max_spread;
}

UpdateMeasurement measure_update(const transformer::Shape& shape,
                                 const transformer::Residual& residual, uint64_t seed,
                                 const UpdateOptions& options) {
  std::mt19937_64 rng = claims_mc::seeded_rng(seed, 0x4a37);
  const transformer::Stack stack = transformer::init_stack(shape, residual, rng);
  const Matrix x = transformer::normalized_input(shape, rng);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix loss_direction(shape.tokens, shape.width);
  for (Eigen::Index i = 0; i < loss_direction.size(); ++i) loss_direction.data()[i] = normal(rng);
  loss_direction /= loss_direction.norm();

  const std::vector<Matrix> states = transformer::forward_states(stack, x);
  const std::vector<transformer::Layer> grads = transformer::backward(stack, states, loss_direction);
  const int sublayers = 2 * shape.layers;

  UpdateMeasurement out;
  const double gain = std::sqrt(2.0) * residual.beta / stack.alpha;  // sqrt(v^2 + w^2)/alpha
  for (int s = 0; s < sublayers; ++s) {
    const double g = transformer::sublayer_norm(grads, s);
    out.theorem_rhs_per_eta += gain * g;
    out.rhs_gain_squared += gain * gain;
    out.gradient_squared += g * g;
    if (options.per_sublayer) out.param_change.push_back(g);
  }

  const std::vector<Matrix> tangents = transformer::forward_tangents(stack, states, grads, -1.0);
  out.sgd_per_eta = tangents.back().norm();
  out.loss_change = tangents.back().cwiseProduct(loss_direction).sum();
  auto step_per_eta = [&](double eta, bool sign) {
    const Matrix f = transformer::forward_states(stack, x, {&grads, -eta, sign}).back();
    return (f - states.back()).norm() / eta;
  };
  if (options.small_step) out.sgd_small_per_eta = step_per_eta(options.first_order_eta, false);
  if (options.finite_step) out.sgd_finite_per_eta = step_per_eta(kFiniteEta, false);
  if (options.adam_step) out.adam_per_eta = step_per_eta(options.first_order_eta, true);
  if (options.per_sublayer) {
    const std::vector<Matrix> moved =
        transformer::forward_states(stack, x, {&grads, -options.first_order_eta, false});
    for (int s = 0; s < sublayers; ++s) {
      out.state_change.push_back(tangents[s + 1].norm());
      if (s == 0) continue;  // its input does not change
      const Matrix propagated = transformer::sublayer_forward(stack, s, moved[s]);
      out.input_amplification.push_back((propagated - states[s + 1]).norm() /
                                        (moved[s] - states[s]).norm());
    }
  }
  return out;
}

}  // namespace normcheck::claims_deepnorm
