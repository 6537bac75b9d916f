// The MPFR path of the backward references' column sums (reference_mp.h):
// dgamma_j = sum_i dy_ij xhat_ij and dbeta_j = sum_i dy_ij, correctly
// rounded, and the scales sum_i |dy_ij xhat_ij| and sum_i |dy_ij|. The
// references call it when the fast phase (reference_fast_bwd.cpp) leaves a
// column value undecided; the fast phase's tests compare the two.
#include <algorithm>
#include <cmath>

#include "reference_mp.h"

namespace normcheck::mp {
namespace {

std::vector<double> rounded_to_double(const std::vector<Real>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = mpfr_get_d(raw(v[i]), MPFR_RNDN);
  return out;
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
  RoundingDecider decider;

  ColumnSums(int64_t cols, unsigned bits)
      : dy_xhat(cols, make_real(bits)),
        abs_dy_xhat(cols, make_real(bits)),
        dy(cols, make_real(64)),
        abs_dy(cols, make_real(bits)),
        group(cols, make_real(64)),
        pending(cols, 1),
        exact(cols, 1),
        term(make_real(24)),
        product(make_real(64)),
        scaled(make_real(bits)),
        sum(make_real(64)),
        sq(make_real(64)),
        sq_d(make_real(64)) {
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
      exact_add(sum, dy[j], term);
      mpfr_swap(raw(sum), raw(dy[j]));
      mpfr_add_d(raw(abs_dy[j]), raw(abs_dy[j]), std::fabs(double{dy_row[j]}), MPFR_RNDN);
      exact_mul(product, term, row.dev[j]);  // inf x 0 = NaN (docs/semantics.md)
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
      exact_mul(product, term, row.dev[j]);
      exact_add(sum, group[j], product);
      mpfr_swap(raw(sum), raw(group[j]));
    }
  }
  void group_end(const NormRow& row, unsigned bits) {
    mpfr_set_prec(raw(scaled), bits);
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (!pending[j]) continue;
      accumulate(j, signed_sqrt_ratio(scaled, group[j], static_cast<long>(group.size()),
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
  bool decide(std::vector<Roundings>& dgamma, int64_t rows, unsigned bits, bool at_cap = false) {
    bool open = false;
    const long log_terms = std::ilogb(static_cast<double>(rows + 8)) + 1;
    for (std::size_t j = 0; j < dy_xhat.size(); ++j) {
      if (!pending[j]) continue;
      ErrorBound error;
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
      else dgamma[j] = v;
    }
    return !open;
  }
};

}  // namespace

ColumnValues column_sums(Norm norm, std::span<const float> dy, std::span<const float> x,
                         int64_t rows, int64_t cols, float eps, unsigned precision_bits) {
  ColumnValues out;
  out.dgamma.resize(cols);
  NormRow row(norm, precision_bits);
  ColumnSums sums(cols, precision_bits);
  auto row_of = [&](std::span<const float> v, int64_t i) {
    return v.subspan(static_cast<std::size_t>(i) * cols, cols);
  };
  for (int64_t i = 0; i < rows; ++i) {
    row.prepare(row_of(x, i), eps);
    sums.add(row_of(dy, i), row, precision_bits);
  }
  out.sum_abs_dy_xhat = rounded_to_double(sums.abs_dy_xhat);  // scales: first pass
  out.sum_abs_dy = rounded_to_double(sums.abs_dy);
  out.dbeta.resize(cols);
  RoundingDecider decider;
  for (int64_t j = 0; j < cols; ++j) decider.decide(sums.dy[j], {}, out.dbeta[j]);  // exact sums
  if (sums.decide(out.dgamma, rows, precision_bits)) return out;
  // Rows ordered by their exact N, so that equal ones form groups (NaN: last, alone).
  std::vector<Real> norms;
  for (int64_t i = 0; i < rows; ++i) {
    row.prepare(row_of(x, i), eps);
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
    const bool last = 2 * bits > kZivCapBits;
    sums.start(bits);
    for (std::size_t g = 0; g < order.size();) {
      sums.group_start();
      std::size_t end = g;
      for (; end < order.size() && mpfr_equal_p(raw(norms[order[g]]), raw(norms[order[end]])); ++end) {
        row.prepare(row_of(x, order[end]), eps);
        sums.group_add(row_of(dy, order[end]), row);
      }
      end = std::max(end, g + 1);  // a NaN N equals nothing, itself included
      if (end == g + 1 && mpfr_nan_p(raw(norms[order[g]]))) {
        row.prepare(row_of(x, order[g]), eps);
        sums.group_add(row_of(dy, order[g]), row);
      }
      sums.group_end(row, bits);
      g = end;
    }
    if (sums.decide(out.dgamma, rows, bits, /*at_cap=*/last) || last) break;
  }
  return out;
}

}  // namespace normcheck::mp
