// RMSNorm with gamma, then the Linear: y = RMSNorm(x; gamma) by the
// rmsnorm_fwd.scalar row, rounded to float32, then z = W y + b in float32.
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/invoke.h"
#include "norm_linear.h"

namespace normcheck {

extern const Kernel kRmsNormFwdScalar;

namespace {

// norm_linear_bounds.cpp: the RMSNorm row's bound carried through the Linear.
Bound rmsnorm_linear_unfolded_bound(const RowCondition& c) {
  return fold_rows::unfolded_linear_bound(rmsnorm_fwd_bound(c), c.d);
}

void rmsnorm_linear_unfolded(const float* x, const float* gamma, const float* w, const float* bias,
                             float* z, int64_t rows, int64_t cols, int64_t out_features, float eps) {
  std::vector<float> y(static_cast<std::size_t>(rows * cols));
  fold_rows::normalize(kRmsNormFwdScalar, x, gamma, nullptr, y.data(), rows, cols, eps);
  fold_rows::linear_rows(y.data(), w, bias, z, rows, cols, out_features);
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
    .bound = &rmsnorm_linear_unfolded_bound,
};

}  // namespace normcheck
