// LayerNorm's affine folded into the Linear (docs/folding.md, F1):
// W' = W diag(gamma), b' = W beta + b in float64, each rounded once to float32
// (norm_linear.h), then xhat = LN(x; 1, 0) by the layernorm_fwd.twopass row
// and z = W' xhat + b' in float32. The fold runs on every call: an engine
// folds once, so its cost here (out_features x cols products, against rows x
// out_features x cols for the Linear) is an overhead the benchmark counts.
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kLayerNormFwdTwopass;

namespace {

void layernorm_linear_folded(const float* x, const float* gamma, const float* beta, const float* w,
                             const float* bias, float* z, int64_t rows, int64_t cols,
                             int64_t out_features, float eps) {
  std::vector<float> w_folded, b_folded;
  fold_rows::fold_affine(w, gamma, beta, bias, cols, out_features, w_folded, b_folded);
  fold_rows::normalize_then_linear(kLayerNormFwdTwopass, x, nullptr, nullptr, w_folded.data(),
                                   b_folded.empty() ? nullptr : b_folded.data(), z, rows, cols, out_features, eps);
}

}  // namespace

extern const Kernel kLayerNormLinearFolded;
constinit const Kernel kLayerNormLinearFolded{
    .name = "layernorm_linear_fwd.folded",
    .op = Op::layernorm_linear_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "W' = fl(W diag(gamma)), b' = fl(W beta + b) in float64 (each rounded once), "
                 "xhat = layernorm_fwd.twopass(x; 1, 0), z = W' xhat + b' in float32",
    .fn = &layernorm_linear_folded,
    // norm_linear_bounds.cpp: the fold's roundings and the two-pass row's bound
    // without affine, carried through the folded Linear
    .bound = &fold_rows::folded_bound<&twopass_layernorm_fwd_bound>,
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},  // layernorm_fwd.twopass's
};

}  // namespace normcheck
