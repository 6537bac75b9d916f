// The row loop, row helpers and table row shared by the scalar backward
// kernels (LayerNorm and RMSNorm).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "normcheck/kernel.h"

namespace normcheck::scalar {

// docs/semantics.md: a row with a NaN or an infinity in x or dy has an all-NaN dx.
inline bool all_finite(const float* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) return false;
  return true;
}

inline void fill_nan(float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();
}

// Gives a row with a NaN or an infinity in x or dy its all-NaN dx and says
// so; the kernel then skips that row's dx pass.
inline bool nan_dx_for_nonfinite_row(const float* xr, const float* dyr, float* dxr, int64_t cols) {
  if (all_finite(xr, cols) && all_finite(dyr, cols)) return false;
  fill_nan(dxr, cols);
  return true;
}

// Zeroes a column sum (dgamma, dbeta) that the rows then add to in row order:
// the fixed sequential order the bounds' gamma_rows terms assume.
inline void zero_if_wanted(float* column_sum, int64_t cols) {
  if (!column_sum) return;
  for (int64_t j = 0; j < cols; ++j) column_sum[j] = 0.0f;
}

// Row r of a backward: its x, dy and dx, and the forward's saved statistics
// (mean 0 for RMSNorm, whose forward saves none; rstd is then its rrms).
struct BackwardRow {
  const float* x;
  const float* dy;
  float* dx;
  float mean;
  float rstd;
};

// The row loop of the scalar backwards: zeroes the column sums dgamma and
// dbeta (either may be null), then hands the rows in order to `row`, which
// adds the row's terms to them and writes its dx. `mean` is null for RMSNorm.
template <class RowFn>
void for_each_backward_row(const float* dy, const float* x, const float* mean, const float* rstd,
                           float* dx, float* dgamma, float* dbeta, int64_t rows, int64_t cols,
                           RowFn row) {
  zero_if_wanted(dgamma, cols);
  zero_if_wanted(dbeta, cols);
  for (int64_t r = 0; r < rows; ++r)
    row(BackwardRow{.x = x + r * cols,
                    .dy = dy + r * cols,
                    .dx = dx + r * cols,
                    .mean = mean ? mean[r] : 0.0f,
                    .rstd = rstd[r]});
}

// The domain of the scalar backwards. The saved rstd (rrms) carries its u
// relative accuracy only while it is a normal float, sqrt(sigma^2 + eps)
// (sqrt(mean(x^2) + eps)) <= 2^126. |x| <= 2^124 keeps it there: sigma <= 2^125
// and, with eps <= FLT_MAX < 2^128, sigma^2 + eps < 2^251 (mean(x^2) + eps < 2^249).
inline constexpr InputRange kBackwardRange{.max_abs_x = 0x1p124};

// The table row of a scalar float32 backward (op layernorm_bwd or rmsnorm_bwd)
// over kBackwardRange.
constexpr Kernel backward_row(std::string_view name, Op op, Origin origin, KernelFn fn, BoundFn bound,
                              std::string_view algorithm) {
  return Kernel{.name = name,
                .op = op,
                .origin = origin,
                .dtype = DType::f32,
                .algorithm = algorithm,
                .fn = fn,
                .bound = bound,
                .range = kBackwardRange};
}

}  // namespace normcheck::scalar
