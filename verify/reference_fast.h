// Internal to normcheck_verify and its tests (not installed): the fast phase
// of the exact forward references. One row of LayerNorm or RMSNorm forward in
// integer and double-double arithmetic with a proven error bound on every
// output; an output is decided when every real within its bound rounds to the
// same float and the same double. The row is decided only when all of its
// outputs are; otherwise the caller runs the arbitrary-precision path
// (reference_mp.h) on it. A decided output is the correct rounding of the
// exact value, so it is the one that path would give: the two never differ.
// reference_fast.cpp derives the bounds; docs/semantics.md summarises them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference_fast_dd.h"

// Internal: hidden from normcheck_verify's exported symbols, as reference_mp.h.
namespace normcheck {
namespace [[gnu::visibility("hidden")]] fast {

// The outputs of one forward row, named as mp::NormRow names them.
struct ForwardRow {
  bool finite = true;  // always true for a decided row (non-finite rows are left to MPFR)
  Roundings mean, r;   // r: rstd (LayerNorm) or rrms (RMSNorm)
  std::vector<Roundings> xhat, y;
  double variance = 0, mean_abs_x = 0, max_abs_x = 0, eps_share = 0;
  int64_t d() const { return d_; }

  // What a backward row continues from (backward_row, ColumnSums): the
  // numerators and c of the derivation in reference_fast.cpp, scaled by
  // 2^-low, each within its relative bound: dev_i = D_i (rho_dev), n = N
  // (rho_n), c = sqrt(d / N) (rho_c). Exact x = m 2^low. Set (has_state)
  // for every finite row whose c is in range, also when an output of the
  // row is left undecided: the column sums need c, not the outputs.
  bool has_state = false;
  std::vector<DD> dev;
  DD n, c;
  double rho_dev = 0, rho_n = 0, rho_c = 0;
  int low = 0;

  int64_t d_ = 0;
  std::vector<int64_t> scaled64;     // scratch: x_i / 2^low as integers
  std::vector<__int128> scaled128;   // the same when they need more than 63 bits
};

// Decides one row of LayerNorm (`layer`) or RMSNorm forward: true when every
// output of `out` is set, false when the row must go to the MPFR path (a
// non-finite input or parameter, a zero output, d > 2^24, a row spanning more
// exponents than 128-bit integers hold, or an output too near a rounding
// boundary for the bound). gamma/beta: empty for "no affine".
//
// bound_scale multiplies every error allowance (the bounds, and the one for
// rounding e + |l| in the decision); 1 is the proven bound. Tests pass 0 (no
// error term: the double-double value's own rounding decides) to show that
// the differential test catches a fast phase without its bound; any other
// value is unproven.
bool forward_row(bool layer, std::span<const float> x, std::span<const float> gamma,
                 std::span<const float> beta, float eps, ForwardRow& out, double bound_scale = 1);

// The outputs of one backward row, named as mp::NormRow names them.
struct BackwardRow {
  std::vector<Roundings> dx;
  double mean_abs_g = 0, mean_abs_g_xhat = 0;  // scales (below)
};

// Decides one row of LayerNorm (`layer`) or RMSNorm backward at the x of
// `fwd`, a row forward_row decided: true when every dx_i is set, false when
// the row must go to the MPFR path (a non-finite dy or gamma, a zero dx, a
// dx too near a rounding boundary, or a scale too near one, below).
// gamma: empty for "no affine". The scales are the doubles
// mp::NormRow::backward computes at `scale_bits` bits of working precision
// (mean|g| and mean|g xhat| through p-bit sums, g = gamma dy): their p-bit
// errors are part of the bound, so a decided scale is that path's double.
bool backward_row(bool layer, const ForwardRow& fwd, std::span<const float> dy,
                  std::span<const float> gamma, unsigned scale_bits, BackwardRow& out,
                  double bound_scale = 1);

// The column sums of a backward problem over the rows forward_row decided,
// in double-double: dgamma_j = sum_i dy_ij xhat_ij and dbeta_j = sum_i dy_ij
// (each decided to its correct roundings), and the scales sum_i |dy_ij xhat_ij|
// and sum_i |dy_ij| as reference.cpp's MPFR pass computes them at `bits`.
// Rows are added in any order, in as many partial sums as wanted (merge):
// a decided value is the correct rounding, so it does not depend on either.
class ColumnSums {
 public:
  explicit ColumnSums(int64_t cols, double bound_scale = 1);

  // Adds row `dy` at the x of `fwd`; a non-finite dy fails the sums.
  void add(const ForwardRow& fwd, std::span<const float> dy);
  // A row forward_row did not decide: the sums then decide nothing.
  void fail() { failed_ = true; }
  // Adds the partial sums of `other` (over other rows).
  void merge(const ColumnSums& other);

  // The decided column values, each vector of the problem's cols; false
  // (the caller sums again with MPFR) when any value of any column is not
  // decided or the sums failed.
  struct Decided {
    std::vector<Roundings> dgamma, dbeta;
    std::vector<double> sum_abs_dy_xhat, sum_abs_dy;
  };
  bool decide(unsigned bits, Decided& out) const;

 private:
  std::vector<DD> dy_xhat_, abs_dy_xhat_, dy_, abs_dy_;
  bool decide_dbeta(std::size_t j, double e, double up, Roundings& out) const;

  std::vector<char> nonzero_;   // some dy of the column is not zero
  std::vector<char> dy_exact_;  // dy_ holds the column's sum of dy exactly
  std::vector<char> abs_dy_exact_;  // abs_dy_ holds the sum of |dy| exactly
  std::vector<int> dy_field_;       // the smallest max(exponent field, 1) of a non-zero dy
  double rho_term_ = 0;        // the largest relative bound of a term dy xhat
  int64_t additions_ = 0;      // rows added and partial sums merged
  int64_t rows_ = 0;
  double bs_ = 1;
  bool failed_ = false;
};

}  // namespace fast
}  // namespace normcheck
