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

// The first-order update ||dF||/eta is computed exactly, as the norm of the
// forward-mode derivative (JVP) of F in the direction -g
// (transformer::forward_tangents), so no step size enters it. Finite steps are
// measured next to it: kFirstOrderEta shows where a "small" step stops being
// first order (Post-LN from N ~ 32 on), kFiniteEta is a realistic step.
inline constexpr double kFirstOrderEta = 1e-6;
inline constexpr double kFiniteEta = 1e-3;

struct UpdateMeasurement {
  double sgd_per_eta = 0;         // ||J_theta F (-g)||: the exact first-order ||dF||/eta (JVP)
  double sgd_small_per_eta = 0;   // ||F(theta - eta g) - F(theta)|| / eta at eta = first_order_eta
  double sgd_finite_per_eta = 0;  // the same at eta = kFiniteEta
  double adam_per_eta = 0;        // ||dF|| / eta for Adam's first step (sign(g)), eta = first_order_eta
  double theorem_rhs_per_eta = 0; // sum_s c_s ||g_s||, c_s = sqrt(v^2 + w^2)/alpha, v = w = beta
  double rhs_gain_squared = 0;    // sum_s c_s^2 (Cauchy-Schwarz: RHS <= sqrt(this) ||g||; = 1 for DeepNorm)
  double gradient_squared = 0;    // ||g||^2 = sum_s ||g_s||^2; <R, dF>/eta = -||g||^2 exactly
  double loss_change = 0;         // <R, J_theta F (-g)>: equals -||g||^2 when the JVP and the backward agree
  // Per sublayer s = 0 .. 2N-1, first order (from the JVP):
  std::vector<double> state_change;   // ||dx_{s+1}|| / eta (the output of sublayer s)
  std::vector<double> param_change;   // ||theta*_s - theta_s|| / eta = ||g_s||
  // ||f_s(x*_s; theta_s) - f_s(x_s; theta_s)|| / ||x*_s - x_s|| for s >= 1 (finite step
  // first_order_eta): how much a sublayer amplifies a change of its input, the factor
  // the derivation sets to 1.
  std::vector<double> input_amplification;
};

struct UpdateOptions {
  double first_order_eta = kFirstOrderEta;
  bool small_step = false;     // also measure the finite step at first_order_eta
  bool finite_step = true;     // also measure at kFiniteEta
  bool adam_step = true;       // also measure Adam's first step
  bool per_sublayer = false;   // fill state_change / param_change / input_amplification
};

// J7's decision rule: an update "stays O(eta)" over a depth sweep when its
// ||dF||/eta varies by at most `max_spread` (max/min) over the sweep.
bool stays_bounded(const std::vector<double>& per_eta, double max_spread);

// J6's decision rule for Theorem 4.2 read as a same-order statement (the
// derivation is a chain of "Theta" steps, not an inequality with constants):
// measured / predicted within a factor 2 either way.
inline bool same_order(double ratio) { return ratio >= 0.5 && ratio <= 2.0; }

UpdateMeasurement measure_update(const transformer::Shape& shape,
                                 const transformer::Residual& residual, uint64_t seed,
                                 const UpdateOptions& options);

}  // namespace normcheck::claims_deepnorm
