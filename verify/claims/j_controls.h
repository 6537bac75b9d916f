// The measuring pieces of J2-J6 and J8, exposed so tests can run them on
// inputs where the answer is known (negative and positive controls).
#pragma once

#include <cstdint>
#include <vector>

#include "monte_carlo.h"

namespace normcheck::claims_jacobian {

// J2: max over softmax weights s (random q at several scales, plus one-hot and
// two-hot adversarial weights) of ||s X|| / sqrt(d), X = n rows with mean 0 and
// variance `row_variance` (1 in Lemma 4.1).
double max_softmax_ratio(int n, int d, double row_variance, uint64_t seed);

// J3: E[z_i^2] for z = alpha x + ReLU(x W) V, W ~ N(0, 2 w^2/d), V ~ N(0, v^2/m),
// x with mean 0 and variance 1; each sample is one draw of (x, W, V), averaged over i.
claims_mc::MeanInterval ffn_second_moment(double alpha, double v, double w, int d, int m,
                                          int samples, uint64_t seed);

// J4: E[||dz/dx dx||^2 / ||dx||^2] (dx isotropic Gaussian), and the ratio
// ||dLN/dz||_2 * sqrt(alpha^2 + v^2 w^2) with ||dLN/dz||_2 = 1/sqrt(sigma_z^2 + eps) (J1).
claims_mc::MeanInterval ffn_input_gain_squared(double alpha, double v, double w, int d, int m,
                                               int samples, uint64_t seed);
claims_mc::MeanInterval layernorm_gain_ratio(double alpha, double v, double w, int d, int m,
                                             int samples, uint64_t seed);

// J5: geometric mean over samples of ||J_K ... J_1 dx|| / ||dx|| for K FFN
// sublayers x -> LN(alpha x + ReLU(x W) V), and the same for the seed's scalar
// model x -> (alpha x + I v w x)/sqrt(alpha^2 + v^2 w^2) with I = +-1 alternating.
double ffn_product_gain(double alpha, double v, double w, int k, int d, int m, int samples,
                        uint64_t seed);
double scalar_model_product_gain(double alpha, double v, double w, int k);
// The seed's prediction ((alpha^2 - v^2 w^2)/(alpha^2 + v^2 w^2))^(K/2).
double predicted_product_gain(double alpha, double v, double w, int k);

// J6: max over sublayers s of ||dx_{s+1}|| / (||dx_s|| + gain ||dtheta_s||),
// dx_0 = 0; > 1 means the per-sublayer bound fails somewhere.
double worst_sublayer_bound_ratio(const std::vector<double>& state_change,
                                  const std::vector<double>& param_change, double gain);

// J8: E[||x W||^2 / ||x||^2] for W (n_in x n_out) xavier-normal with `gain`;
// relu: ||ReLU(x W)||^2 instead.
claims_mc::MeanInterval xavier_gain_squared(int n_in, int n_out, double gain, bool relu,
                                            int samples, uint64_t seed);

}  // namespace normcheck::claims_jacobian
