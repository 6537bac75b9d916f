// The model update of DeepNet's Section 4 measured on a real stack
// (transformer.h): ||F(x, theta - eta g) - F(x, theta)|| after one step, with
// the quantities of the paper's Lemma / Theorem 4.2 next to it. Shared by J6
// (per-sublayer bound) and J7 (depth sweep).
//
// The stated loss: L = <R, F> (Frobenius inner product) with a fixed Gaussian
// R scaled to ||R||_F = 1, so ||dL/dF|| = 1 exactly for every depth (the
// derivation's "||dL/dF|| = O(1)" with the constant pinned down).
#pragma once

#include <cstdint>
#include <vector>

#include "transformer.h"

namespace normcheck::claims_deepnorm {

// eta small enough that ||dF||/eta is the first-order (directional derivative)
// value: a 10x smaller eta changes it by < 1e-3 relative (tests check this),
// and large enough that float64 rounding in F (~1e-13 absolute through 2000
// sublayers) is < 1e-6 of the change.
inline constexpr double kFirstOrderEta = 1e-6;
// A realistic finite step, where second-order terms may show.
inline constexpr double kFiniteEta = 1e-3;

struct UpdateMeasurement {
  double sgd_per_eta = 0;         // ||dF|| / eta, SGD, eta = kFirstOrderEta
  double sgd_finite_per_eta = 0;  // the same at eta = kFiniteEta
  double adam_per_eta = 0;        // ||dF|| / eta for Adam's first step (sign(g)), first order
  double theorem_rhs_per_eta = 0; // sum_s sqrt(v^2 + w^2)/alpha ||g_s||, v = w = beta
  double gradient_squared = 0;    // sum_s ||g_s||^2 (SGD: ||dF|| >= eta * this, as <R, dF> = -eta ||g||^2)
  // Per sublayer s = 0 .. 2N-1, first-order SGD step:
  std::vector<double> state_change;   // ||x*_{s+1} - x_{s+1}|| / eta (the output of sublayer s)
  std::vector<double> param_change;   // ||theta*_s - theta_s|| / eta = ||g_s||
  // ||f_s(x*_s; theta_s) - f_s(x_s; theta_s)|| / ||x*_s - x_s|| for s >= 1: how much a
  // sublayer amplifies a change of its input, the factor the derivation sets to 1.
  std::vector<double> input_amplification;
};

struct UpdateOptions {
  double first_order_eta = kFirstOrderEta;
  bool finite_step = true;     // also measure at kFiniteEta
  bool adam_step = true;       // also measure Adam's first step
  bool per_sublayer = false;   // fill state_change / param_change / input_amplification
};

// J7's decision rule: an update "stays O(eta)" over a depth sweep when its
// ||dF||/eta varies by at most `max_spread` (max/min) over the sweep.
bool stays_bounded(const std::vector<double>& per_eta, double max_spread);

UpdateMeasurement measure_update(const transformer::Shape& shape,
                                 const transformer::Residual& residual, uint64_t seed,
                                 const UpdateOptions& options);

}  // namespace normcheck::claims_deepnorm
