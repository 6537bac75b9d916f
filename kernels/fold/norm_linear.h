// Steps shared by the rows of a normalization followed by a Linear
// (Op::layernorm_linear_fwd, rmsnorm_linear_fwd; docs/folding.md, "Folded
// transforms as kernels"): the Linear in float32, the fold in float64, and the
// bounds of the unfolded and folded forms (kernels/fold/norm_linear_bounds.cpp,
// derivations there).
#pragma once

#include <cstdint>
#include <vector>

#include "normcheck/invoke.h"
#include "normcheck/kernel.h"

namespace normcheck::fold_rows {

// z[r][i] = fl(sum_j w[i][j] y[r][j] + bias[i]) in float32: eight partial
// sums over j = k mod 8 (independent, so the compiler can keep them in one
// vector register), added pairwise, then the bias. Each product passes
// through at most d/8 + 3 + 1 <= d + 1 roundings, so the dot-product bound
// gamma_(d+1) (sum |terms| + |bias|) of norm_linear_bounds.cpp holds for this
// order as for left to right.
inline void linear_rows(const float* y, const float* w, const float* bias, float* z, int64_t rows,
                        int64_t cols, int64_t out_features) {
  constexpr int64_t kLanes = 8;
  const int64_t body = cols - cols % kLanes;
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y + r * cols;
    float* zr = z + r * out_features;
    for (int64_t i = 0; i < out_features; ++i) {
      const float* wi = w + i * cols;
      float acc[kLanes] = {};
      for (int64_t j = 0; j < body; j += kLanes)
        for (int64_t k = 0; k < kLanes; ++k) acc[k] += wi[j + k] * yr[j + k];
      for (int64_t j = body; j < cols; ++j) acc[j - body] += wi[j] * yr[j];
      const float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      zr[i] = bias ? sum + bias[i] : sum;
    }
  }
}

// The folded Linear, each entry rounded once to float32:
//   W'_ij = fl(W_ij gamma_j): the product of two floats is exact in float64
//           (24 + 24 significant bits), so the cast is its only rounding;
//   b'_i  = fl(sum_j W_ij beta_j + b_i): the sum in float64, left to right
//           (error <= gamma_(d+1)(2^-53) (sum_j |W_ij beta_j| + |b_i|)), then cast.
// gamma null: W' = W; beta null: b' = b. `bias_out` is sized out_features
// when there is a bias or a beta, else left empty (no bias).
// (verify/fold/fold.h computes the same fold for weight files, in Eigen and for
// every storage format; the kernels library does not link Eigen, and a float32
// fold needs no more than these two loops.)
inline void fold_affine(const float* w, const float* gamma, const float* beta, const float* bias,
                        int64_t cols, int64_t out_features, std::vector<float>& w_out,
                        std::vector<float>& bias_out) {
  w_out.resize(static_cast<std::size_t>(out_features * cols));
  for (int64_t i = 0; i < out_features; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double wij = w[i * cols + j];
      w_out[static_cast<std::size_t>(i * cols + j)] =
          gamma ? static_cast<float>(wij * static_cast<double>(gamma[j])) : static_cast<float>(wij);
    }
  bias_out.clear();
  if (!bias && !beta) return;
  bias_out.resize(static_cast<std::size_t>(out_features));
  for (int64_t i = 0; i < out_features; ++i) {
    double c = 0;
    if (beta)
      for (int64_t j = 0; j < cols; ++j) c += static_cast<double>(w[i * cols + j]) * beta[j];
    if (bias) c += bias[i];
    bias_out[static_cast<std::size_t>(i)] = static_cast<float>(c);
  }
}

// y = Norm(x; gamma, beta) by the table's row `norm` (float32, a forward
// norm op; gamma/beta may be null), its statistics not kept.
inline void normalize(const Kernel& norm, const float* x, const float* gamma, const float* beta, float* y,
                      int64_t rows, int64_t cols, float eps) {
  KernelArgs args{.rows = rows, .cols = cols, .eps = eps};
  args.x = x;
  args.gamma = gamma;
  args.beta = beta;
  args.out = y;
  invoke(norm, args);
}

// z = W y + b (linear_rows) with y = Norm(x; gamma, beta) by the table's row
// `norm` (normalize), held in float32 between the two: the unfolded form, and
// with gamma and beta null and W, b folded (fold_affine), the folded one.
inline void normalize_then_linear(const Kernel& norm, const float* x, const float* gamma, const float* beta,
                                  const float* w, const float* bias, float* z, int64_t rows, int64_t cols,
                                  int64_t out_features, float eps) {
  std::vector<float> y(static_cast<std::size_t>(rows * cols));
  normalize(norm, x, gamma, beta, y.data(), rows, cols, eps);
  linear_rows(y.data(), w, bias, z, rows, cols, out_features);
}

// The bound of "normalize with the affine (the norm kernel's bound `norm`),
// then the Linear in float32" and of "fold in float64, normalize without the
// affine, then the folded Linear", at row length d.
Bound unfolded_linear_bound(const Bound& norm, int64_t d);
Bound folded_linear_bound(const Bound& norm, int64_t d);

// The same as a row's bound, for the norm row whose bound is kNorm.
template <BoundFn kNorm>
Bound unfolded_bound(const RowCondition& c) {
  return unfolded_linear_bound(kNorm(c), c.d);
}
template <BoundFn kNorm>
Bound folded_bound(const RowCondition& c) {
  return folded_linear_bound(kNorm(c), c.d);
}

}  // namespace normcheck::fold_rows
