// RMSNorm's gamma folded into the Linear (docs/folding.md, F2):
// W' = W diag(gamma) in float64, rounded once to float32 (norm_linear.h),
// b' = b, then xhat = RMSNorm(x; 1) by the rmsnorm_fwd.scalar row and
// z = W' xhat + b' in float32. The fold runs on every call (its cost is
// counted by the benchmark; an engine folds once).
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kRmsNormFwdScalar;

namespace {

void rmsnorm_linear_folded(const float* x, const float* gamma, const float* w, const float* bias,
                           float* z, int64_t rows, int64_t cols, int64_t out_features, float eps) {
  std::vector<float> w_folded, b_folded;
  fold_rows::fold_affine(w, gamma, nullptr, bias, cols, out_features, w_folded, b_folded);
  fold_rows::normalize_then_linear(kRmsNormFwdScalar, x, nullptr, nullptr, w_folded.data(),
                                   b_folded.empty() ? nullptr : b_folded.data(), z, rows, cols, out_features, eps);
}

}  // namespace

extern const Kernel kRmsNormLinearFolded;
constinit const Kernel kRmsNormLinearFolded{
    .name = "rmsnorm_linear_fwd.folded",
    .op = Op::rmsnorm_linear_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "W' = fl(W diag(gamma)) in float64 (rounded once), xhat = rmsnorm_fwd.scalar(x; 1), "
                 "z = W' xhat + b in float32",
    .fn = &rmsnorm_linear_folded,
    // norm_linear_bounds.cpp: the fold's roundings and the RMSNorm row's bound
    // without gamma, carried through the folded Linear
    .bound = &fold_rows::folded_bound<&rmsnorm_fwd_bound>,
};

}  // namespace normcheck
