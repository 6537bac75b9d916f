// The four exact references of reference.h: each walks the rows through one
// mp::NormRow (verify/reference_row.cpp), which hands back correctly rounded
// outputs, after the fast phase (verify/reference_fast.cpp, forward rows;
// verify/reference_fast_bwd.cpp, backward rows and column sums) has decided
// what it can; the MPFR dgamma/dbeta column sums are decided here the same way.
#include "normcheck/reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "normcheck/huge_pages.h"
#include "reference_fast.h"
#include "reference_mp.h"
#include "simd/thread_pool.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::NormRow;

// precision_bits is the first working precision of the Ziv loop; the results
// do not depend on it (docs/semantics.md). Below 64 bits nearly every output
// would need a second attempt.
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

// The arrays of n exact values (of a problem's every element: the largest
// arrays of a judgement), advised for huge pages before their first touch.
ExactValues sized(std::size_t n) { return {large_vector<double>(n), large_vector<float>(n)}; }

template <class R>  // mp::Roundings or fast::Roundings
void put(ExactValues& out, std::size_t i, R v) {
  out.exact[i] = v.d;
  out.rounded[i] = v.f;
}

// kappa and max_kappa are scales of the bounds: products of two correctly
// rounded doubles (relative error below 2^-51) are accurate enough.
// Row: mp::NormRow or fast::ForwardRow (the same fields).
template <class Row>
RowStats stats_of(const Row& row, int64_t rows) {
  RowStats s;
  s.mean = row.mean.d;
  s.variance = row.variance;
  s.r = row.r.d;
  s.mean_abs_x = row.mean_abs_x;
  s.finite = row.finite;
  s.condition.d = row.d();
  s.condition.rows = rows;
  s.condition.kappa = row.mean_abs_x * row.r.d;
  s.condition.max_kappa = row.max_abs_x * row.r.d;
  s.condition.eps_share = row.eps_share;
  return s;
}

// Fills y, xhat, the row statistic r (rstd or rrms), the mean when asked
// and the stats of a forward reference, row by row.
template <class Out>
void forward_rows(Out& out, ExactValues& r_out, ExactValues* mean_out, Norm norm,
                  std::span<const float> x, std::span<const float> gamma,
                  std::span<const float> beta, int64_t rows, int64_t cols, float eps,
                  unsigned precision_bits, bool elements = true) {
  const std::size_t n = elements ? static_cast<std::size_t>(rows) * cols : 0;
  out.y = sized(n);
  out.xhat = sized(n);
  r_out = sized(rows);
  if (mean_out) *mean_out = sized(rows);
  out.stats.resize(rows);
  auto store = [&](int64_t i, const auto& decided) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    for (int64_t j = 0; elements && j < cols; ++j) {
      put(out.y, base + j, decided.y[j]);
      put(out.xhat, base + j, decided.xhat[j]);
    }
    put(r_out, i, decided.r);
    if (mean_out) put(*mean_out, i, decided.mean);
    out.stats[i] = stats_of(decided, 1);
  };
  auto x_row = [&](int64_t i) { return x.subspan(static_cast<std::size_t>(i) * cols, cols); };
  // The fast phase decides most rows; its outputs are the correct roundings,
  // so they are the MPFR path's (reference_fast.h). Rows in contiguous chunks
  // on the kernels' thread pool (from simd::kParallelCheckElements on): each
  // row's outputs depend on that row alone, so the result does not depend on
  // the thread count. The MPFR path then takes the undecided rows on this thread.
  std::vector<char> decided(rows, 0);
  const int64_t chunks = simd::check_chunks(rows, cols);
  simd::parallel_for(chunks, [&](int64_t c) {
    thread_local fast::ForwardRow fast_row;  // as backward_rows' scratch
    for (int64_t i = simd::chunk_first_row(rows, chunks, c); i < simd::chunk_first_row(rows, chunks, c + 1); ++i)
      if (fast::forward_row(norm == Norm::layer, x_row(i), gamma, beta, eps, fast_row)) {
        store(i, fast_row);
        decided[i] = 1;
      }
  });
  NormRow row(norm, precision_bits);
  for (int64_t i = 0; i < rows; ++i) {
    if (decided[i]) continue;
    row.forward(x_row(i), gamma, beta, eps);
    store(i, row);
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

// What NormRow::forward(x, {}, {}, eps, false) leaves in `row` (the exact
// numerators, the statistics, mean, r and xhat), with mean, r and xhat from
// the fast phase when it decides the row: they are the correct roundings
// either way.
void forward_for_backward(NormRow& row, fast::ForwardRow& fast_row, std::span<const float> x,
                          float eps) {
  if (!fast::forward_row(row.norm() == Norm::layer, x, {}, {}, eps, fast_row)) {
    row.forward(x, {}, {}, eps, /*with_y=*/false);
    return;
  }
  row.prepare(x, eps);
  row.mean = {fast_row.mean.f, fast_row.mean.d};
  row.r = {fast_row.r.f, fast_row.r.d};
  for (std::size_t i = 0; i < x.size(); ++i) row.xhat[i] = {fast_row.xhat[i].f, fast_row.xhat[i].d};
  row.bits_used = row.start_bits();
}

// Fills dx, xhat, stats, the row scales, dgamma, the column scales and (for
// LayerNorm) dbeta of a backward reference. The fast phase first, rows in
// contiguous chunks on the kernels' thread pool: forward part, dx and the
// row scales (fast::backward_row), and the column sums as one partial sum per
// chunk (fast::ColumnSums), merged in chunk order. The MPFR path then takes
// the rows the fast phase left, on this thread, and sums the columns again
// over every row when a column value is left undecided. Decided values are
// the correct roundings (the scales: the MPFR path's doubles) whichever path
// and chunking ran, so the result depends on neither.
// Column values of either path (fast::ColumnSums::Decided, mp::ColumnValues).
template <class Out, class Columns>
void store_columns(Out& out, Columns&& columns) {
  const std::size_t cols = columns.dgamma.size();
  for (std::size_t j = 0; j < cols; ++j) put(out.dgamma, j, columns.dgamma[j]);
  out.sum_abs_dy_xhat = std::move(columns.sum_abs_dy_xhat);
  out.sum_abs_dy = std::move(columns.sum_abs_dy);
  if constexpr (requires { out.dbeta; }) {
    out.dbeta = sized(cols);
    for (std::size_t j = 0; j < cols; ++j) put(out.dbeta, j, columns.dbeta[j]);
  }
}

template <class Out>
void backward_rows(Out& out, Norm norm, std::span<const float> dy, std::span<const float> x,
                   std::span<const float> gamma, int64_t rows, int64_t cols, float eps,
                   unsigned precision_bits) {
  out.dgamma = sized(cols);
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  out.dx = sized(n);
  out.xhat = sized(n);
  // the forward's statistics, correctly rounded (the saved ones)
  ExactValues& r_out = [&]() -> ExactValues& {
    if constexpr (requires { out.rstd; }) return out.rstd;
    else return out.rrms;
  }();
  r_out = sized(rows);
  if constexpr (requires { out.mean; }) out.mean = sized(rows);
  out.stats.resize(rows);
  out.mean_abs_g.resize(rows);
  out.mean_abs_g_xhat.resize(rows);
  auto row_of = [&](std::span<const float> v, int64_t i) {
    return v.subspan(static_cast<std::size_t>(i) * cols, cols);
  };
  auto store = [&](int64_t i, const auto& forward, const auto& dx, double mean_abs_g,
                   double mean_abs_g_xhat) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    for (int64_t j = 0; j < cols; ++j) {
      put(out.dx, base + j, dx[j]);
      put(out.xhat, base + j, forward.xhat[j]);
    }
    put(r_out, i, forward.r);
    if constexpr (requires { out.mean; }) put(out.mean, i, forward.mean);
    out.stats[i] = stats_of(forward, rows);
    set_backward_maxima(out.stats[i].condition, row_of(dy, i), gamma);
    out.mean_abs_g[i] = mean_abs_g;
    out.mean_abs_g_xhat[i] = mean_abs_g_xhat;
  };
  const bool layer = norm == Norm::layer;
  std::vector<char> decided(rows, 0);
  // One chunk per thread (from simd::kParallelCheckElements on, as the
  // forward's): each holds a partial sum of every column.
  const int64_t chunks = rows * cols < simd::kParallelCheckElements
                             ? std::min<int64_t>(rows, 1)
                             : std::min<int64_t>(rows, simd::thread_count());
  std::vector<fast::ColumnSums> partial;
  partial.reserve(chunks);
  for (int64_t c = 0; c < chunks; ++c) partial.emplace_back(cols);
  simd::parallel_for(chunks, [&](int64_t c) {
    // Per thread and kept: a row's scratch, allocated once per thread rather
    // than per call (freed worker-thread memory goes back to the system, and
    // page faults would then cost as much as the rows).
    thread_local fast::ForwardRow forward;
    thread_local fast::BackwardRow backward;
    for (int64_t i = rows * c / chunks; i < rows * (c + 1) / chunks; ++i) {
      const bool forward_decided = fast::forward_row(layer, row_of(x, i), {}, {}, eps, forward);
      if (forward.has_state)
        partial[c].add(forward, row_of(dy, i));
      else
        partial[c].fail();
      if (!forward_decided ||
          !fast::backward_row(layer, forward, row_of(dy, i), gamma, precision_bits, backward))
        continue;
      store(i, forward, backward.dx, backward.mean_abs_g, backward.mean_abs_g_xhat);
      decided[i] = 1;
    }
  });
  NormRow row(norm, precision_bits);
  fast::ForwardRow fast_row;
  for (int64_t i = 0; i < rows; ++i) {
    if (decided[i]) continue;
    forward_for_backward(row, fast_row, row_of(x, i), eps);
    row.backward(row_of(dy, i), gamma);
    store(i, row, row.dx, row.mean_abs_g, row.mean_abs_g_xhat);
  }

  fast::ColumnSums sums(cols);
  for (const fast::ColumnSums& p : partial) sums.merge(p);
  fast::ColumnSums::Decided columns;
  if (sums.decide(precision_bits, columns)) {
    store_columns(out, columns);
    return;
  }
  store_columns(out, mp::column_sums(norm, dy, x, rows, cols, eps, precision_bits));
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

LayerNormFwdReference reference_layernorm_fwd_statistics(std::span<const float> x, int64_t rows,
                                                         int64_t cols, float eps,
                                                         unsigned precision_bits) {
  const char* fn = "reference_layernorm_fwd_statistics";
  require_len(fn, "x", x, checked_size(fn, rows, cols, eps, precision_bits), false);
  LayerNormFwdReference out;
  forward_rows(out, out.rstd, &out.mean, Norm::layer, x, {}, {}, rows, cols, eps, precision_bits,
               /*elements=*/false);
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
  backward_rows(out, Norm::layer, dy, x, gamma, rows, cols, eps, precision_bits);
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

RmsNormFwdReference reference_rmsnorm_fwd_statistics(std::span<const float> x, int64_t rows,
                                                     int64_t cols, float eps,
                                                     unsigned precision_bits) {
  const char* fn = "reference_rmsnorm_fwd_statistics";
  require_len(fn, "x", x, checked_size(fn, rows, cols, eps, precision_bits), false);
  RmsNormFwdReference out;
  forward_rows(out, out.rrms, nullptr, Norm::rms, x, {}, {}, rows, cols, eps, precision_bits,
               /*elements=*/false);
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
  backward_rows(out, Norm::rms, dy, x, gamma, rows, cols, eps, precision_bits);
  return out;
}

}  // namespace normcheck
