// The exact result of a normalization followed by a Linear
// (Op::layernorm_linear_fwd, rmsnorm_linear_fwd):
//   z_i = sum_j W_ij (gamma_j xhat_j + beta_j) + b_i,
// xhat the exact normalized row (reference.h, without affine), gamma = 1 and
// beta = 0 when absent, b = 0 without a bias. Also the per-output scales the
// z bound is stated in (kernel.h, Bound).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "normcheck/kernel.h"
#include "normcheck/reference.h"

namespace normcheck {

struct NormLinearReference {
  // rows x out_features: z to within exact_error (below); NaN for a row with a
  // non-finite x (its xhat is NaN).
  std::vector<double> z;
  std::vector<double> exact_error;
  // rows x out_features: T_i = sum_j |W_ij| (|gamma_j xhat_j| + |beta_j|) + |b_i|,
  // S_i = sum_j |W_ij gamma_j xhat_j|, and c_abs_i >= |sum_j W_ij beta_j + b_i|,
  // each a float64 sum of non-negative terms (low by at most a relative
  // gamma_(2d+2)(2^-53)).
  std::vector<double> t, s, c_abs;
  ExactValues xhat;             // rows x cols: the exact normalized row, no affine
  std::vector<RowStats> stats;  // rows: of the norm (reference.h)
};

// op is layernorm_linear_fwd or rmsnorm_linear_fwd; w is out_features x cols,
// bias out_features or empty, gamma/beta cols or empty (beta: LayerNorm only).
// Every parameter (gamma, beta, w, bias) must be finite.
//
// z is a double-double dot product over the 2d terms (W_ij gamma_j) xhat_j and
// W_ij beta_j plus b_i, rounded to double (W_ij gamma_j and W_ij beta_j are
// exact in float64: two floats of 24 significant bits). xhat is the exact
// value rounded to double, off by at most 2^-53 |xhat_j|, so
//   exact_error = 2^-53 S_i (1 + 2^-52)                   (xhat's rounding)
//               + gamma_(2d+1)(2^-53)^2 (2 S_i + T_i)      (Dot2, sum|terms| <= (1 + 2^-52) S_i + T_i)
//               + |lo|                                    (hi + lo rounded to hi)
//               + 4 d 2^-1074                             (a product that underflows float64).
NormLinearReference reference_norm_linear(Op op, std::span<const float> x, std::span<const float> gamma,
                                          std::span<const float> beta, std::span<const float> w,
                                          std::span<const float> bias, int64_t rows, int64_t cols,
                                          int64_t out_features, float eps);

}  // namespace normcheck
