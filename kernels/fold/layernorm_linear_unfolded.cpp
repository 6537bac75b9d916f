// LayerNorm with its affine, then the Linear: y = LN(x; gamma, beta) by the
// layernorm_fwd.twopass row, rounded to float32, then z = W y + b in float32.
// What a model that does not fold computes.
#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kLayerNormFwdTwopass;

namespace {

void layernorm_linear_unfolded(const float* x, const float* gamma, const float* beta, const float* w,
                               const float* bias, float* z, int64_t rows, int64_t cols,
                               int64_t out_features, float eps) {
  fold_rows::normalize_then_linear(kLayerNormFwdTwopass, x, gamma, beta, w, bias, z, rows, cols, out_features,
                                   eps);
}

}  // namespace

extern const Kernel kLayerNormLinearUnfolded;
constinit const Kernel kLayerNormLinearUnfolded{
    .name = "layernorm_linear_fwd.unfolded",
    .op = Op::layernorm_linear_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "y = layernorm_fwd.twopass(x; gamma, beta) in float32, then z = W y + b "
                 "(float32 dot products in 8 partial sums, bias last)",
    .fn = &layernorm_linear_unfolded,
    // norm_linear_bounds.cpp: the two-pass row's bound carried through the Linear
    .bound = &fold_rows::unfolded_bound<&twopass_layernorm_fwd_bound>,
    .range = {.max_abs_x = 0x1p62, .sqrt_d_scaled = true},  // layernorm_fwd.twopass's
};

}  // namespace normcheck
