// The four exact references of reference.h: each walks the rows through one
// mp::NormRow (verify/reference_row.cpp), which hands back correctly rounded
// outputs, after the fast phase (verify/reference_fast.cpp) has decided the
// forward rows it can; the dgamma/dbeta column sums are decided here the
// same way.
#include "normcheck/reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "reference_fast.h"
#include "reference_mp.h"
#include "simd/thread_pool.h"

namespace normcheck {
namespace {

using mp::Norm;
using mp::NormRow;
using mp::raw;
using mp::Real;
using mp::Roundings;

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

ExactValues sized(std::size_t n) { return {std::vector<double>(n), std::vector<float>(n)}; }

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

// The column sums of a backward problem, in the extended reals:
//   dbeta_j = sum dy_ij exactly (exact_add), rounded once;
//   dgamma_j = sum dy_ij xhat_ij = sum (dy_ij D_ij) c_i: each term is an exact
//     product times the row's c (relative error 2u, u = 2^-p) rounded once,
//     so within 3.01u of the term (later passes: signed_sqrt_ratio, 1.51u,
//     exact when the term is dyadic); a p-bit sum adds at most u |partial sum|
//     <= u A per term, with A >= sum |term~| summed upwards, and
//     |term| <= 2 |term~|: the error is at most (8 + rows) u A
//     <= 2^(EXP(A) + ceil(log2(rows + 8)) - p), and 0 when no term and no
//     addition rounded (a sum of dyadic terms, e.g. xhat = +-1 for d = 2,
//     can be a tie). Columns the decider cannot round are summed again over
//     all rows at twice the precision, rows with equal N grouped (group_*).
struct ColumnSums {
  std::vector<Real> dy_xhat, abs_dy_xhat, dy, abs_dy;
  std::vector<Real> group;  // exact sum of dy D over a group of rows
  std::vector<char> pending;  // dgamma columns not yet decided
  std::vector<char> exact;    // pending columns whose sum has not rounded in this pass
  Real term, product, scaled, sum, sq, sq_d;
  mp::RoundingDecider decider;

  ColumnSums(int64_t cols, unsigned bits)
      : dy_xhat(cols, mp::make_real(bits)),
        abs_dy_xhat(cols, mp::make_real(bits)),
        dy(cols, mp::make_real(64)),
        abs_dy(cols, mp::make_real(bits)),
        group(cols, mp::make_real(64)),
        pending(cols, 1),
        exact(cols, 1),
        term(mp::make_real(24)),
        product(mp::make_real(64)),
        scaled(mp::make_real(bits)),
        sum(mp::make_real(64)),
        sq(mp::make_real(64)),
        sq_d(mp::make_real(64)) {
    start(bits);
    for (std::size_t j = 0; j < dy.size(); ++j) {
      mpfr_set_zero(raw(dy[j]), 1);
      mpfr_set_zero(raw(abs_dy[j]), 1);
    }
  }

  // Resets the pending dgamma sums for a pass at `bits`.
  void start(unsigned bits) {
    for (std::size_t j = 0; j < dy_xhat.size(); ++j) {
      if (!pending[j]) continue;
      exact[j] = 1;
      mpfr_set_prec(raw(dy_xhat[j]), bits);
      mpfr_set_prec(raw(abs_dy_xhat[j]), bits);
      mpfr_set_zero(raw(dy_xhat[j]), 1);
      mpfr_set_zero(raw(abs_dy_xhat[j]), 1);
    }
  }

  // The first pass, row by row; it also sums dy (exactly) and |dy| (a scale).
  void add(std::span<const float> dy_row, NormRow& row, unsigned bits) {
    bool c_exact;
    const Real& c = row.c_at(bits, c_exact);
    mpfr_set_prec(raw(scaled), bits);
    for (std::size_t j = 0; j < dy_row.size(); ++j) {
      mpfr_set_flt(raw(term), dy_row[j], MPFR_RNDN);
      mp::exact_add(sum, dy[j], term);
      mpfr_swap(raw(sum), raw(dy[j]));
      mpfr_add_d(raw(abs_dy[j]), raw(abs_dy[j]), std::fabs(double{dy_row[j]}), MPFR_RNDN);
      mp::exact_mul(product, term, row.dev[j]);  // inf x 0 = NaN (docs/semantics.md)
      accumulate(j, mpfr_mul(raw(scaled), raw(product), raw(c), MPFR_RNDN) == 0 && c_exact);
    }
  }

  // Later passes, a group of rows with the same exact N (so the same c) at a
  // time: sum dy D over the group exactly, then one term
  // signed_sqrt_ratio(sum, d, N) per column. Terms that cancel within a group
  // (identical rows, opposite dy) cancel exactly.
  void group_start() {
    for (std::size_t j = 0; j < group.size(); ++j)
      if (pending[j]) mpfr_set_zero(raw(group[j]), 1);
  }
  void group_add(std::span<const float> dy_row, const NormRow& row) {
    for (std::size_t j = 0; j < dy_row.size(); ++j) {
      if (!pending[j]) continue;
      mpfr_set_flt(raw(term), dy_row[j], MPFR_RNDN);
      mp::exact_mul(product, term, row.dev[j]);
      mp::exact_add(sum, group[j], product);
      mpfr_swap(raw(sum), raw(group[j]));
    }
  }
  void group_end(const NormRow& row, unsigned bits) {
    mpfr_set_prec(raw(scaled), bits);
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (!pending[j]) continue;
      accumulate(j, mp::signed_sqrt_ratio(scaled, group[j], static_cast<long>(group.size()),
                                          row.norm_sq, sq, sq_d));
    }
  }

  // Adds `scaled` (the term of column j) to the column's sums.
  void accumulate(std::size_t j, bool term_exact) {
    const bool sum_exact = mpfr_add(raw(dy_xhat[j]), raw(dy_xhat[j]), raw(scaled), MPFR_RNDN) == 0;
    exact[j] = exact[j] && term_exact && sum_exact;
    mpfr_abs(raw(scaled), raw(scaled), MPFR_RNDN);
    mpfr_add(raw(abs_dy_xhat[j]), raw(abs_dy_xhat[j]), raw(scaled), MPFR_RNDU);
  }

  // Decides the pending dgamma columns summed at `bits` over `rows` rows;
  // true when all are decided.
  // At the cap, a column still open is taken as an exact midpoint
  // (RoundingDecider::as_midpoint).
  bool decide(ExactValues& dgamma, int64_t rows, unsigned bits, bool at_cap = false) {
    bool open = false;
    const long log_terms = std::ilogb(static_cast<double>(rows + 8)) + 1;
    for (std::size_t j = 0; j < dy_xhat.size(); ++j) {
      if (!pending[j]) continue;
      mp::ErrorBound error;
      if (!exact[j] && mpfr_regular_p(raw(abs_dy_xhat[j])))
        error = {false, mpfr_get_exp(raw(abs_dy_xhat[j])) + log_terms - static_cast<long>(bits)};
      Roundings v;
      if (at_cap) {
        v = decider.as_midpoint(dy_xhat[j], error);
        pending[j] = false;
      } else {
        pending[j] = !decider.decide(dy_xhat[j], error, v);
      }
      if (pending[j]) open = true;
      else put(dgamma, j, v);
    }
    return !open;
  }
};

std::vector<double> rounded_to_double(const std::vector<Real>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = mpfr_get_d(raw(v[i]), MPFR_RNDN);
  return out;
}

ExactValues exact_values(const std::vector<Real>& v) {
  ExactValues out = sized(v.size());
  Roundings r;
  mp::RoundingDecider decider;
  for (std::size_t i = 0; i < v.size(); ++i) {
    decider.decide(v[i], {}, r);
    put(out, i, r);
  }
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
  auto store = [&](int64_t i, const auto& decided) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    for (int64_t j = 0; j < cols; ++j) {
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
  const int64_t chunks = static_cast<int64_t>(n) < simd::kParallelCheckElements
                             ? 1
                             : std::min<int64_t>(rows, 4 * simd::thread_count());
  simd::parallel_for(chunks, [&](int64_t c) {
    fast::ForwardRow fast_row;
    for (int64_t i = rows * c / chunks; i < rows * (c + 1) / chunks; ++i)
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

// Fills dx, xhat, stats, the row scales and dgamma of a backward reference,
// row by row, and returns the column sums for dbeta and the column scales.
template <class Out>
ColumnSums backward_rows(Out& out, Norm norm, std::span<const float> dy, std::span<const float> x,
                         std::span<const float> gamma, int64_t rows, int64_t cols, float eps,
                         unsigned precision_bits) {
  out.dgamma = sized(cols);
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  out.dx = sized(n);
  out.xhat = sized(n);
  out.stats.resize(rows);
  out.mean_abs_g.resize(rows);
  out.mean_abs_g_xhat.resize(rows);
  NormRow row(norm, precision_bits);
  fast::ForwardRow fast_row;
  ColumnSums sums(cols, precision_bits);
  for (int64_t i = 0; i < rows; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * cols;
    const auto dy_row = dy.subspan(base, cols);
    forward_for_backward(row, fast_row, x.subspan(base, cols), eps);
    row.backward(dy_row, gamma);
    sums.add(dy_row, row, precision_bits);
    for (int64_t j = 0; j < cols; ++j) {
      put(out.dx, base + j, row.dx[j]);
      put(out.xhat, base + j, row.xhat[j]);
    }
    out.stats[i] = stats_of(row, rows);
    set_backward_maxima(out.stats[i].condition, dy_row, gamma);
    out.mean_abs_g[i] = row.mean_abs_g;
    out.mean_abs_g_xhat[i] = row.mean_abs_g_xhat;
  }
  out.sum_abs_dy_xhat = rounded_to_double(sums.abs_dy_xhat);  // scales: first pass
  if (sums.decide(out.dgamma, rows, precision_bits)) return sums;
  // Rows ordered by their exact N, so that equal ones form groups (NaN: last, alone).
  std::vector<Real> norms;
  for (int64_t i = 0; i < rows; ++i) {
    row.prepare(x.subspan(static_cast<std::size_t>(i) * cols, cols), eps);
    norms.push_back(row.norm_sq);  // a copy keeps the precision: exact
  }
  auto less = [&](int64_t a, int64_t b) {
    if (mpfr_nan_p(raw(norms[a])) || mpfr_nan_p(raw(norms[b])))
      return !mpfr_nan_p(raw(norms[a])) && mpfr_nan_p(raw(norms[b]));
    return mpfr_less_p(raw(norms[a]), raw(norms[b])) != 0;
  };
  std::vector<int64_t> order(rows);
  for (int64_t i = 0; i < rows; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), less);
  for (unsigned bits = 2 * precision_bits;; bits *= 2) {
    const bool last = 2 * bits > mp::kZivCapBits;
    sums.start(bits);
    for (std::size_t g = 0; g < order.size();) {
      sums.group_start();
      std::size_t end = g;
      for (; end < order.size() && mpfr_equal_p(raw(norms[order[g]]), raw(norms[order[end]])); ++end) {
        const std::size_t base = static_cast<std::size_t>(order[end]) * cols;
        row.prepare(x.subspan(base, cols), eps);
        sums.group_add(dy.subspan(base, cols), row);
      }
      end = std::max(end, g + 1);  // a NaN N equals nothing, itself included
      if (end == g + 1 && mpfr_nan_p(raw(norms[order[g]]))) {
        const std::size_t base = static_cast<std::size_t>(order[g]) * cols;
        row.prepare(x.subspan(base, cols), eps);
        sums.group_add(dy.subspan(base, cols), row);
      }
      sums.group_end(row, bits);
      g = end;
    }
    if (sums.decide(out.dgamma, rows, bits, /*at_cap=*/last) || last) break;
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
  out.dbeta = exact_values(sums.dy);
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
  out.sum_abs_dy = rounded_to_double(sums.abs_dy);
  return out;
}

}  // namespace normcheck
