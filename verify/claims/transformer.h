// A float64 Transformer stack (Eigen) with a hand-written backward, for the
// DeepNorm claims J6 and J7 (seed 003; DeepNet, arXiv 2203.00555).
//
// Each layer is two sublayers, each normalized Post-LN / DeepNorm style:
//   x_{l+1} = LN(alpha * x_l + G_l(x_l)),
// G = multi-head self-attention softmax(Q K^T / sqrt(d_k)) V W^O (optionally
// causal, for a decoder-only stack), then G = ReLU(x W1) W2. Tokens are rows.
// LN has eps = 1e-5 (PyTorch's default) and no affine parameters; the linear
// maps have no bias (DeepNet zero-initializes biases, so at initialization they
// only add parameters whose gradient is the column sum of the sublayer's
// output gradient; leaving them out keeps theta = the weight matrices).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Dense>

namespace normcheck::transformer {

using Matrix = Eigen::MatrixXd;

struct Shape {
  int layers = 1;    // N: 2N sublayers
  int width = 64;    // d
  int heads = 4;     // d must be a multiple of heads
  int ffn = 256;     // m, the FFN's inner width
  int tokens = 16;   // n, the sequence length
  bool causal = false;
};

// alpha: the residual scale; beta: the xavier-normal gain of W^V, W^O, W1, W2
// (W^Q and W^K always get gain 1). Post-LN is {1, 1}.
struct Residual {
  double alpha = 1;
  double beta = 1;
};

Residual deepnorm_encoder(int layers);  // alpha = (2N)^(1/4), beta = (8N)^(-1/4)

struct Layer {
  Matrix wq, wk, wv, wo;  // d x d, applied as x * W
  Matrix w1;              // d x m
  Matrix w2;              // m x d
};

struct Stack {
  Shape shape;
  double alpha = 1;
  std::vector<Layer> layers;
};

// xavier normal: N(0, gain^2 * 2 / (fan_in + fan_out)), as nn.init.xavier_normal_.
Stack init_stack(const Shape& shape, const Residual& residual, std::mt19937_64& rng);

// Rows with mean 0 and variance 1, as the seed assumes for every sublayer input.
Matrix normalized_input(const Shape& shape, std::mt19937_64& rng);

// A parameter update theta + step * direction, applied layer by layer while
// evaluating (a 1000-layer stack holds 0.4 GB of weights: no second copy).
// sign = true uses sign(direction): Adam's first step, whose bias-corrected
// m / sqrt(v) is exactly sign(g) (Adam's eps aside).
struct Update {
  const std::vector<Layer>* direction = nullptr;
  double step = 0;
  bool sign = false;
};

// Sublayer s (0 .. 2N-1; even: attention of layer s/2, odd: its FFN).
Matrix sublayer_forward(const Stack& stack, int sublayer, const Matrix& x,
                        const Update& update = {});

// The inputs of every sublayer and the output: states[0] = x, states[2N] = F.
std::vector<Matrix> forward_states(const Stack& stack, const Matrix& x,
                                   const Update& update = {});

// d<sum(dF .* F)>/dtheta for F = forward(x): one gradient per weight matrix,
// by the chain rule written out per sublayer (tests check it against
// central differences).
std::vector<Layer> backward(const Stack& stack, const std::vector<Matrix>& states,
                            const Matrix& dF);

// Forward-mode derivative (a JVP) of the whole stack at (x, theta) in the
// parameter direction `scale * direction` (x held fixed): the exact first-order
// change of every state, tangents[s] = d states[s] (tangents[0] = 0,
// tangents[2N] = dF). Written out per sublayer like the backward; the LN part
// reuses the backward's row formula because the LN Jacobian is symmetric.
std::vector<Matrix> forward_tangents(const Stack& stack, const std::vector<Matrix>& states,
                                     const std::vector<Layer>& direction, double scale);

// Frobenius norm of sublayer s's parameters in `grads` (attention: Q, K, V, O).
double sublayer_norm(const std::vector<Layer>& grads, int sublayer);

}  // namespace normcheck::transformer
