// Exact references: the result of each op on the given float inputs, from
// exact numerators (MPFR) and a Ziv loop that starts at `precision_bits`
// (default 256) and doubles it until each rounding is proven. The results do
// not depend on `precision_bits`. Most forward rows (and the forward part of
// backward rows) are decided first by a double-double phase with a proven
// error bound (verify/reference_fast.cpp), which returns the same correctly
// rounded values. No Boost type appears here, so including this header is
// cheap; the multiprecision code is in verify/reference*.cpp.
//
// Every value is returned twice (docs/semantics.md):
//   exact   - the exact result correctly rounded to nearest-even double.
//   rounded - the exact result correctly rounded to float (round to nearest
//             even, subnormals, +-inf past the overflow boundary).
// Semantics for NaN/inf inputs, constant rows, d = 1 and eps = 0 are in
// docs/semantics.md; in short the reference evaluates the definition in the
// extended reals and gives NaN where it is 0/0 or inf - inf.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck {

inline constexpr unsigned kDefaultPrecisionBits = 256;

// A row-major matrix of exact values.
struct ExactValues {
  std::vector<double> exact;
  std::vector<float> rounded;
};

// Per-row quantities every bound and metric needs.
struct RowStats {
  double mean = 0;          // exact mean of the row
  double variance = 0;      // exact biased variance (divide by d); mean of x^2 for RMSNorm
  double r = 0;             // exact 1/sqrt(variance + eps) (rstd or rrms)
  double mean_abs_x = 0;    // exact mean |x_i|
  bool finite = true;       // every input of the row is finite
  RowCondition condition;   // what bounds depend on (rows = 1 here; set by callers)
};

struct LayerNormFwdReference {
  ExactValues y;                // rows x cols
  ExactValues xhat;             // rows x cols, (x - mean) * r: what the bound's xhat is
  ExactValues mean, rstd;       // rows
  std::vector<RowStats> stats;  // rows
};

// gamma/beta: empty span for "no affine" (each may be empty on its own).
LayerNormFwdReference reference_layernorm_fwd(std::span<const float> x, std::span<const float> gamma,
                                              std::span<const float> beta, int64_t rows,
                                              int64_t cols, float eps,
                                              unsigned precision_bits = kDefaultPrecisionBits);

// The same without affine and without its elements: mean, rstd and stats,
// with y and xhat left empty (what a backward kernel is given as its saved
// statistics, at a fraction of the memory).
LayerNormFwdReference reference_layernorm_fwd_statistics(std::span<const float> x, int64_t rows,
                                                         int64_t cols, float eps,
                                                         unsigned precision_bits = kDefaultPrecisionBits);

struct LayerNormBwdReference {
  ExactValues dx;               // rows x cols
  ExactValues dgamma, dbeta;    // cols
  ExactValues xhat;             // rows x cols
  ExactValues mean, rstd;       // rows: the forward's, of x without affine (a backward kernel's saved statistics)
  std::vector<RowStats> stats;  // rows (condition.rows = rows)
  std::vector<double> sum_abs_dy_xhat, sum_abs_dy;  // cols: scales of the dgamma/dbeta bounds
  std::vector<double> mean_abs_g, mean_abs_g_xhat;  // rows: scales of the dx bound
};

// The exact gradient of LayerNorm at x (exact mean and rstd of x with this eps).
// Kernels receive the float-rounded saved statistics; their bound accounts for it.
LayerNormBwdReference reference_layernorm_bwd(std::span<const float> dy, std::span<const float> x,
                                              std::span<const float> gamma, int64_t rows,
                                              int64_t cols, float eps,
                                              unsigned precision_bits = kDefaultPrecisionBits);

struct RmsNormFwdReference {
  ExactValues y;                // rows x cols
  ExactValues xhat;             // x * rrms
  ExactValues rrms;             // rows
  std::vector<RowStats> stats;  // mean/variance hold mean(x) and mean(x^2)
};

RmsNormFwdReference reference_rmsnorm_fwd(std::span<const float> x, std::span<const float> gamma,
                                          int64_t rows, int64_t cols, float eps,
                                          unsigned precision_bits = kDefaultPrecisionBits);

// rrms and stats alone (y and xhat empty), as reference_layernorm_fwd_statistics.
RmsNormFwdReference reference_rmsnorm_fwd_statistics(std::span<const float> x, int64_t rows,
                                                     int64_t cols, float eps,
                                                     unsigned precision_bits = kDefaultPrecisionBits);

struct RmsNormBwdReference {
  ExactValues dx;               // rows x cols
  ExactValues dgamma;           // cols
  ExactValues xhat;             // x * rrms
  ExactValues rrms;             // rows: the forward's, of x without gamma (a backward kernel's saved statistic)
  std::vector<RowStats> stats;
  std::vector<double> sum_abs_dy_xhat, sum_abs_dy;  // cols (sum_abs_dy: the dgamma_abs scale)
  std::vector<double> mean_abs_g, mean_abs_g_xhat;  // rows
};

RmsNormBwdReference reference_rmsnorm_bwd(std::span<const float> dy, std::span<const float> x,
                                          std::span<const float> gamma, int64_t rows, int64_t cols,
                                          float eps, unsigned precision_bits = kDefaultPrecisionBits);

}  // namespace normcheck
