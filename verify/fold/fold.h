// Folding a normalization's affine into the Linear layers that read it, and
// turning a Pre-LN LayerNorm into an RMSNorm by centring the writers of the
// residual stream. docs/folding.md states the identities and their bounds.
//
// Conventions (PyTorch's): a Linear maps z (d) to W z + b with W e x d
// (out x in); LN(x; gamma, beta) = xhat * gamma + beta with
// xhat = (x - mean) / sqrt(var + eps); RMSNorm(x; gamma) = x / sqrt(mean(x^2) + eps) * gamma.
//
// Arithmetic: the inputs are storage values (float32, bf16, f16), so every
// W_ij gamma_j is exact in float64 (two significands of <= 24 bits); sums
// (W beta + b, the centring means) are computed as double-doubles (TwoProd /
// TwoSum, error <= gamma_n(2^-53)^2 sum|terms|) and every result is rounded
// once to the storage format (round.h).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "normcheck/double_double.h"
#include "normcheck/kernel.h"

namespace normcheck::fold {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

// A Linear layer with storage values held as doubles. b empty: no bias.
struct Linear {
  Matrix w;  // e x d
  Vector b;  // e, or empty
};

// A transform that cannot be done as asked (a Post-LN residual path, shapes
// that do not fit): the message says why.
struct FoldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where the normalization sits relative to the residual stream.
enum class Placement {
  pre_ln,  // h + F(Norm(h)): Norm's output feeds only the sublayer's Linears
  post_ln, // Norm(h + F(h)): Norm's output IS the next residual stream
  none,    // not on a residual path (a final norm before the head, say)
};

// Throws FoldError for post_ln: its output is the residual stream, which the
// skip connection carries on without a Linear that gamma/beta could be folded
// into, so folding them into the sublayer's Linears alone changes the model
// (docs/folding.md, "Post-LN"). `what` names the norm in the message.
void require_foldable(Placement placement, const std::string& what);

// W' = W diag(gamma), b' = W beta + b (beta empty: RMSNorm, or a LayerNorm
// without bias: b' = b), each entry rounded once to `storage`. The result has
// a bias when `linear` has one or beta is given. Throws FoldError when the
// sizes do not match. (A consumer stored in x out, such as GPT-2's Conv1D, is
// passed transposed: fold_file does that.)
Linear fold_affine(const Linear& linear, const Vector& gamma, const Vector& beta, DType storage);

// The negative control: gamma applied on the wrong side, diag(gamma) W (row i
// scaled by gamma_(i mod d)), and b' = b + beta-term as fold_affine. Kept to
// show the verification catches it.
Linear fold_affine_wrong_side(const Linear& linear, const Vector& gamma, const Vector& beta,
                              DType storage);

// Centring a writer of a Pre-LN residual stream: its output o becomes M o with
// M = I - 11^T/d, d the residual width.
//   Axis::rows    W is d x k (a Linear writing the stream, e.g. attention out,
//                 MLP down): every column centred, and the bias.
//   Axis::columns W is n x d (an embedding table, one row per token, or a
//                 writer stored in x out such as GPT-2's Conv1D): every row
//                 centred, and the bias (d entries) if there is one.
// Throws FoldError when the bias's size is not d.
enum class Axis { rows, columns };
Linear centre_writer(const Linear& writer, Axis axis, DType storage);

// sum_j a_j b_j + c as an unevaluated double-double (normcheck/double_double.h).
using normcheck::DoubleDouble;
using normcheck::dot_dd;
using normcheck::two_sum;

}  // namespace normcheck::fold
