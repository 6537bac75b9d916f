// The four exact references of reference.h: each walks the rows through one
// mp::NormRow (verify/reference_row.cpp) and rounds what it computed.
#include "normcheck/reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "reference_mp.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::NormRow;
using mp::raw;
using mp::Real;

// Below 64 bits a float-input product (48 bits) would no longer be exact and
// the "one rounding to float" promise would fail; the default is 256.
constexpr unsigned kMinPrecisionBits = 64;
constexpr unsigned kMaxPrecisionBits = 1u << 16;

void require(bool ok, const char* fn, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(fn) + ": " + what);
}

std::size_t checked_size(const char* fn, int64_t rows, int64_t cols, float eps,
                         unsigned precision_bits) {
  require(rows >= 0, fn, "rows must be >= 0, got " + std::to_string(rows));
  require(cols >= 1, fn, "cols (d) must be >= 1, got " + std::to_string(cols));
  require(std::isfinite(eps) && eps >= 0, fn, "eps must be finite and >= 0");
  require(precision_bits >= kMinPrecisionBits && precision_bits <= kMaxPrecisionBits, fn,
          "precision_bits must be in [64, 65536], got " + std::to_string(precision_bits));
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

void require_len(const char* fn, const char* name, std::span<const float> v, std::size_t n,
                 bool optional) {
  require(v.size() == n || (optional && v.empty()), fn,
          std::string(name) + " has " + std::to_string(v.size()) + " elements, expected " +
              std::to_string(n) + (optional ? " (or 0 for none)" : ""));
}

ExactValues sized(std::size_t n) { return {std::vector<double>(n), std::vector<float>(n)}; }

void put(ExactValues& out, std::size_t i, const Real& v) {
  out.exact[i] = mp::round_to_double(v);
  out.rounded[i] = mp::round_to_float(v);
}

// a * b rounded to double, through `scratch` (the product of two rounded
// doubles could differ in the last bit; this does not).
double product(Real& scratch, const Real& a, const Real& b) {
  mpfr_mul(raw(scratch), raw(a), raw(b), MPFR_RNDN);
  return mp::round_to_double(scratch);
}

RowStats stats_of(const NormRow& row, int64_t rows, Real& scratch) {
  RowStats s;
  s.mean = mp::round_to_double(row.mean);
  s.variance = mp::round_to_double(row.variance);
  s.r = mp::round_to_double(row.r);
  s.mean_abs_x = mp::round_to_double(row.mean_abs_x);
  s.finite = row.finite;
  s.condition.d = row.d();
  s.condition.rows = rows;
  s.condition.kappa = product(scratch, row.mean_abs_x, row.r);
  s.condition.max_kappa = product(scratch, row.max_abs_x, row.r);
  s.condition.eps_share = mp::round_to_double(row.eps_share);
  return s;
}

std::vector<Real> zeros(std::size_t n, unsigned bits) {
  Real zero = mp::make_real(bits);
  mpfr_set_zero(raw(zero), 1);
  return std::vector<Real>(n, zero);
}

std::vector<double> rounded_to_double(const std::vector<Real>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = mp::round_to_double(v[i]);
  return out;
}

// Column sums over the rows of a backward problem, in the extended reals.
struct ColumnSums {
  std::vector<Real> dy_xhat, abs_dy_xhat, dy, abs_dy;
  Real scratch;

  ColumnSums(int64_t cols, unsigned bits)
      : dy_xhat(zeros(cols, bits)),
        abs_dy_xhat(zeros(cols, bits)),
        dy(zeros(cols, bits)),
        abs_dy(zeros(cols, bits)),
        scratch(mp::make_real(bits)) {}

  void add(std::span<const float> dy_row, const NormRow& row) {
    for (std::size_t j = 0; j < dy_row.size(); ++j) {
      mpfr_mul_d(raw(scratch), raw(row.xhat[j]), dy_row[j], MPFR_RNDN);
      mpfr_add(raw(dy_xhat[j]), raw(dy_xhat[j]), raw(scratch), MPFR_RNDN);
      mpfr_abs(raw(scratch), raw(scratch), MPFR_RNDN);
      mpfr_add(raw(abs_dy_xhat[j]), raw(abs_dy_xhat[j]), raw(scratch), MPFR_RNDN);
      mpfr_add_d(raw(dy[j]), raw(dy[j]), dy_row[j], MPFR_RNDN);
      mpfr_add_d(raw(abs_dy[j]), raw(abs_dy[j]), std::fabs(static_cast<double>(dy_row[j])),
                 MPFR_RNDN);
    }
  }
};

ExactValues rounded_values(const std::vector<Real>& v) {
  ExactValues out = sized(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) put(out, i, v[i]);
  return out;
}

// Fills y, xhat, the row statistic r (rstd or rrms), the mean when asked
// and the stats of a forward reference, row by row.
template <class Out>
void forward_rows(Out& out, ExactValues& r_out, ExactValues* mean_out, Norm norm,
                  std::span<const float> x, std::span<const float> gamma,
                  std::span<const float> beta, int64_t rows, int64_t cols, float eps,
                  unsigned precision_bits) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  out.y = sized(n);
  out.xhat = sized(n);
  r_out = sized(rows);
  if (mean_out) *mean_out = sized(rows);
  out.stats.resize(rows);
  NormRow row(norm, precision_bits);
  Real scratch = mp::make_real(precision_bits);
  for (int64_t i = 0; i < rows; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    row.forward(x.subspan(base, cols), gamma, beta, eps);
    for (int64_t j = 0; j < cols; ++j) {
      put(out.y, base + j, row.y[j]);
      put(out.xhat, base + j, row.xhat[j]);
    }
    put(r_out, i, row.r);
    if (mean_out) put(*mean_out, i, row.mean);
    out.stats[i] = stats_of(row, 1, scratch);
  }
}

// The backward magnitudes of RowCondition: max|dy|, max|gamma dy| (a product
// of two floats is exact in double: 48 bits, |.| < 2^256) and max|gamma| (1
// without gamma), each over the finite values: a non-finite dy or gamma makes
// its dx row NaN and its column sum non-finite, which no magnitude bounds.
void set_backward_maxima(RowCondition& c, std::span<const float> dy, std::span<const float> gamma) {
  c.max_abs_dy = c.max_abs_g = 0;
  c.max_abs_gamma = gamma.empty() ? 1 : 0;
  for (std::size_t j = 0; j < dy.size(); ++j) {
    const double gamma_j = gamma.empty() ? 1.0 : std::fabs(static_cast<double>(gamma[j]));
    const double dy_j = std::fabs(static_cast<double>(dy[j]));
    if (std::isfinite(dy_j)) c.max_abs_dy = std::max(c.max_abs_dy, dy_j);
    if (std::isfinite(gamma_j)) c.max_abs_gamma = std::max(c.max_abs_gamma, gamma_j);
    if (std::isfinite(dy_j * gamma_j)) c.max_abs_g = std::max(c.max_abs_g, dy_j * gamma_j);
  }
}

// Fills dx, xhat, stats and the row scales of a backward reference, row by
// row, and returns the column sums for dgamma/dbeta and their scales.
template <class Out>
ColumnSums backward_rows(Out& out, Norm norm, std::span<const float> dy, std::span<const float> x,
                         std::span<const float> gamma, int64_t rows, int64_t cols, float eps,
                         unsigned precision_bits) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  out.dx = sized(n);
  out.xhat = sized(n);
  out.stats.resize(rows);
  out.mean_abs_g.resize(rows);
  out.mean_abs_g_xhat.resize(rows);
  NormRow row(norm, precision_bits);
  ColumnSums sums(cols, precision_bits);
  for (int64_t i = 0; i < rows; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    const auto dy_row = dy.subspan(base, cols);
    row.forward(x.subspan(base, cols), {}, {}, eps, /*with_y=*/false);
    row.backward(dy_row, gamma);
    sums.add(dy_row, row);
    for (int64_t j = 0; j < cols; ++j) {
      put(out.dx, base + j, row.dx[j]);
      put(out.xhat, base + j, row.xhat[j]);
    }
    out.stats[i] = stats_of(row, rows, sums.scratch);
    set_backward_maxima(out.stats[i].condition, dy_row, gamma);
    out.mean_abs_g[i] = mp::round_to_double(row.mean_abs_g);
    out.mean_abs_g_xhat[i] = mp::round_to_double(row.mean_abs_g_xhat);
  }
  return sums;
}

}  // namespace

LayerNormFwdReference reference_layernorm_fwd(std::span<const float> x, std::span<const float> gamma,
                                              std::span<const float> beta, int64_t rows,
                                              int64_t cols, float eps, unsigned precision_bits) {
  const char* fn = "reference_layernorm_fwd";
  const std::size_t n = checked_size(fn, rows, cols, eps, precision_bits);
  require_len(fn, "x", x, n, false);
  require_len(fn, "gamma", gamma, cols, true);
  require_len(fn, "beta", beta, cols, true);
  LayerNormFwdReference out;
  forward_rows(out, out.rstd, &out.mean, Norm::layer, x, gamma, beta, rows, cols, eps,
               precision_bits);
  return out;
}

LayerNormBwdReference reference_layernorm_bwd(std::span<const float> dy, std::span<const float> x,
                                              std::span<const float> gamma, int64_t rows,
                                              int64_t cols, float eps, unsigned precision_bits) {
  const char* fn = "reference_layernorm_bwd";
  const std::size_t n = checked_size(fn, rows, cols, eps, precision_bits);
  require_len(fn, "dy", dy, n, false);
  require_len(fn, "x", x, n, false);
  require_len(fn, "gamma", gamma, cols, true);
  LayerNormBwdReference out;
  const ColumnSums sums =
      backward_rows(out, Norm::layer, dy, x, gamma, rows, cols, eps, precision_bits);
  out.dgamma = rounded_values(sums.dy_xhat);
  out.dbeta = rounded_values(sums.dy);
  out.sum_abs_dy_xhat = rounded_to_double(sums.abs_dy_xhat);
  out.sum_abs_dy = rounded_to_double(sums.abs_dy);
  return out;
}

RmsNormFwdReference reference_rmsnorm_fwd(std::span<const float> x, std::span<const float> gamma,
                                          int64_t rows, int64_t cols, float eps,
                                          unsigned precision_bits) {
  const char* fn = "reference_rmsnorm_fwd";
  const std::size_t n = checked_size(fn, rows, cols, eps, precision_bits);
  require_len(fn, "x", x, n, false);
  require_len(fn, "gamma", gamma, cols, true);
  RmsNormFwdReference out;
  forward_rows(out, out.rrms, nullptr, Norm::rms, x, gamma, {}, rows, cols, eps, precision_bits);
  return out;
}

RmsNormBwdReference reference_rmsnorm_bwd(std::span<const float> dy, std::span<const float> x,
                                          std::span<const float> gamma, int64_t rows, int64_t cols,
                                          float eps, unsigned precision_bits) {
  const char* fn = "reference_rmsnorm_bwd";
  const std::size_t n = checked_size(fn, rows, cols, eps, precision_bits);
  require_len(fn, "dy", dy, n, false);
  require_len(fn, "x", x, n, false);
  require_len(fn, "gamma", gamma, cols, true);
  RmsNormBwdReference out;
  const ColumnSums sums =
      backward_rows(out, Norm::rms, dy, x, gamma, rows, cols, eps, precision_bits);
  out.dgamma = rounded_values(sums.dy_xhat);
  out.sum_abs_dy_xhat = rounded_to_double(sums.abs_dy_xhat);
  out.sum_abs_dy = rounded_to_double(sums.abs_dy);
  return out;
}

}  // namespace normcheck
