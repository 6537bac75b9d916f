// RMSNorm with gamma, then the Linear: y = RMSNorm(x; gamma) by the
// rmsnorm_fwd.scalar row, rounded to float32, then z = W y + b in float32.
#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kRmsNormFwdScalar;

namespace {

void rmsnorm_linear_unfolded(const float* x, const float* gamma, const float* w, const float* bias,
                             float* z, int64_t rows, int64_t cols, int64_t out_features, float eps) {
  fold_rows::normalize_then_linear(kRmsNormFwdScalar, x, gamma, nullptr, w, bias, z, rows, cols, out_features, eps);
}

}  // namespace

extern const Kernel kRmsNormLinearUnfolded;
constinit const Kernel kRmsNormLinearUnfolded{
    .name = "rmsnorm_linear_fwd.unfolded",
    .op = Op::rmsnorm_linear_fwd,
    .origin = Origin::ours,
    .dtype = DType::f32,
    .algorithm = "y = rmsnorm_fwd.scalar(x; gamma) in float32, then z = W y + b "
                 "(float32 dot products in 8 partial sums, bias last)",
    .fn = &rmsnorm_linear_unfolded,
    // norm_linear_bounds.cpp: the RMSNorm row's bound carried through the Linear
    .bound = &fold_rows::unfolded_bound<&rmsnorm_fwd_bound>,
};

}  // namespace normcheck
