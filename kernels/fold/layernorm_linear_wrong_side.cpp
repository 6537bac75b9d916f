// Negative control: gamma folded on the wrong side, W' = diag(gamma) W (output
// row i scaled by gamma_(i mod cols)) instead of W diag(gamma); b' = W beta + b
// as in the correct fold. It claims the folded row's bound, and the checks
// must catch it whenever gamma is not constant (for gamma = c 1 both sides
// agree, and so does the control).
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kLayerNormFwdTwopass;

namespace {

void layernorm_linear_wrong_side(const float* x, const float* gamma, const float* beta, const float* w,
                                 const float* bias, float* z, int64_t rows, int64_t cols,
                                 int64_t out_features, float eps) {
  std::vector<float> w_folded, b_folded;
  fold_rows::fold_affine(w, nullptr, beta, bias, cols, out_features, w_folded, b_folded);
  if (gamma)
    for (int64_t i = 0; i < out_features; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        float& v = w_folded[static_cast<std::size_t>(i * cols + j)];
        v = static_cast<float>(static_cast<double>(v) * gamma[i % cols]);
      }
  fold_rows::normalize_then_linear(kLayerNormFwdTwopass, x, nullptr, nullptr, w_folded.data(),
                                   b_folded.empty() ? nullptr : b_folded.data(), z, rows, cols, out_features, eps);
}

}  // namespace

extern const Kernel kLayerNormLinearWrongSide;
constinit const Kernel kLayerNormLinearWrongSide{
    .name = "layernorm_linear_fwd.wrong_side",
    .op = Op::layernorm_linear_fwd,
    .origin = Origin::control,
    .dtype = DType::f32,
    .algorithm = "control: gamma folded on the wrong side, W' = diag(gamma) W (row i scaled by "
                 "gamma_(i mod d)), b' = W beta + b, then as layernorm_linear_fwd.folded",
    .fn = &layernorm_linear_wrong_side,
    .bound = &fold_rows::folded_bound<&twopass_layernorm_fwd_bound>,  // the folded row's
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},
};

}  // namespace normcheck
