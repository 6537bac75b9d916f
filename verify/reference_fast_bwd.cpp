// The fast phase of the exact backward references (reference_fast.h):
// a backward row's dx and scales, and the column sums dgamma and dbeta.
//
// Notation of reference_fast.cpp: x_i = m_i 2^low, D_i, N and c = sqrt(d / N)
// scaled by 2^-low, k = d (LayerNorm) or 1 (RMSNorm), u = 2^-53, and the
// forward row's bounds rho_dev (D_i), rho_n (N), rho_c (c). Every relative
// bound below stays under 2^-70 (d <= 2^24, fewer than 2^30 rows), so the
// products of two of them that the first-order sums leave out, and the
// roundings of the double operations computing the bounds, are covered by
// kSlack (1 + 2^-20) as in the forward; sums of magnitudes are taken from
// the computed double-doubles, within a relative 2^-70 of the exact ones.
//
// dx. With g_i = gamma_i dy_i (exact in double: 48 bits, 2^-298 <= |g_i|
// < 2^256 or 0), Sg = sum g_i and G = sum g_i D_i:
//   M_i = (k g_i - Sg) N - k D_i G            (RMSNorm: no Sg)
//   dx_i = M_i w 2^-low,  w = c / N,
// the MPFR path's numerator M_i (reference_row.cpp) scaled by 2^-2low: from
// dx_i = r (g_i - Sg / d - xhat_i sum_j g_j xhat_j / d) with r = k c 2^-low,
// xhat_i = D_i c and c^2 = d / N. Absolute errors, A_g = sum |g_i| and
// B = sum |g_i D_i| (reference_fast_dd.h gives each operation's bound):
//   Sg: d - 1 add_double, each <= 2.01 u^2 (A_g + |g_i|):
//       e_Sg = 2.01 d u^2 A_g
//   t_i = D_i g_i: rho_dev + 7.04 u^2 relative; G: d - 1 add_signed, each
//       <= 3.02 u^2 (B + |t_i|): e_G = (rho_dev + 8 u^2) B + 3.02 d u^2 B
//   kG = k G: e_kG = k e_G + 8 u^2 |kG|
//   a_i = k g_i - Sg (k g_i exact, two_prod): e_a = e_Sg + 3.02 u^2 (k |g_i| + |Sg|);
//       RMSNorm: a_i = g_i, e_a = 0
//   a_i N: e_aN = (8 u^2 + rho_n) |a_i N| + e_a N
//   b_i = D_i kG: e_b = (rho_dev + 8 u^2) |b_i| + |D_i| e_kG
//   M_i = a_i N - b_i: e_M = e_aN + e_b + 3.02 u^2 (|a_i N| + |b_i|)
//   w = c / N: rho_w = rho_c + rho_n + 32 u^2 (div, 23.7 u^2)
//   dx_i: e_dx = 2^-low (|w| e_M + (rho_w + 8 u^2) |M_i w|)
// M_i may cancel to far below its terms: its error is absolute, and dx_i is
// decided only when that error leaves its roundings unambiguous.
//
// Scales, as mp::NormRow::backward computes them at p = scale_bits bits:
//   mean|g| = RN53(A_p) / d, A_p the p-bit running sum of |g_i| (RN, each
//     addition within 2^-p of its sum: |A_p - A_g| <= 1.01 d 2^-p A_g);
//   mean|g xhat| = RN53(T_p), T_p = RN_p(RN_p(B_p c_p) / d), B_p the p-bit
//     sum of RN_p(|g_i D_i|), c_p within 2^(1-p) of c:
//     |T_p - T| <= 1.01 (d + 5) 2^-p T for T = c B / d.
// Each is decided with its double-double error plus the p-bit path's: then
// the exact value and the p-bit one lie inside the same double's rounding
// interval, and the decided double is the one that path returns. A sum of
// non-negative terms the double-double chain held exactly (sum|g| here,
// sum|dy| below: sums of floats and of 48-bit products, often double
// midpoints) is instead rounded exactly when its p-bit sums were exact too
// (scale_double).
//   A_g: as Sg, e = 2.01 d u^2 A_g;  T = (B c) / d: B summed with add_nonneg
//   (3.02 d u^2 B after the terms' rho_dev + 8 u^2), then rho_c + 8 u^2 + 32 u^2.
//
// Column sums. Term t_ij = dy_ij D_ij c_i (= dy_ij xhat_ij): two products,
// rho_t = rho_dev + rho_c + 16 u^2 relative (the largest over the rows).
// Each column is one chain of add_signed / add_double over R rows and K
// merges of partial sums, each addition within 3.02 u^2 of the magnitudes it
// adds, which sum to at most the column's sum of magnitudes:
//   dgamma_j: e = (rho_t + 3.02 (R + K) u^2) A_j,  A_j = sum_i |t_ij|
//   dbeta_j:  e = 3.02 (R + K) u^2 Y_j,             Y_j = sum_i |dy_ij|
// and the scales as reference.cpp's first MPFR pass computes them at p bits:
// sum|dy xhat| adds RN_p(product c_p) (1.01 * 3 2^-p) upwards (2^(1-p) per
// addition): within 1.01 (2R + 3) 2^-p of A_j; sum|dy| adds |dy| to nearest:
// within 1.01 R 2^-p of Y_j. A column whose every dy is zero has exact +0
// sums (MPFR's, which start at +0: +0 + -0 = +0). dbeta_j is a sum of
// floats, exact in double-double unless its terms span too many exponents
// and often a float midpoint: while no addition of its chain rounded (each
// checked), its roundings are taken from the exact sum (exact_roundings; an
// exact 0 is +0, as MPFR's x + -x).
#include "reference_fast.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace normcheck::fast {
namespace {

// The p-bit paths' relative deviations, 1.01 n 2^-p for n roundings.
double p_bit_error(double n, unsigned p) { return 1.01 * n * std::ldexp(1.0, -static_cast<int>(p)); }

[[gnu::always_inline]] inline DD magnitude(DD v) { return v.h < 0 ? neg(v) : v; }

// The exponent field of a double, and of a float: a non-zero double is a
// multiple of 2^(field - 1075), a non-zero float of 2^(max(field, 1) - 150).
[[gnu::always_inline]] inline int field(double v) {
  return static_cast<int>((std::bit_cast<uint64_t>(v) >> 52) & 0x7ff);
}
[[gnu::always_inline]] inline int field(float v) {
  return static_cast<int>((std::bit_cast<uint32_t>(v) >> 23) & 0xff);
}

// The double the p-bit path returns for a sum of non-negative terms, each a
// multiple of 2^lowest: when the double-double chain held the sum exactly
// (`exact`) and the sum spans at most p bits, every p-bit partial sum (at
// most the sum, a multiple of 2^lowest) was exact too, so the p-bit path's
// double is the exact sum's, ties to even included (exact_roundings: such
// sums are often double midpoints, which no bound decides). Otherwise the
// sum is decided within e (which holds the p-bit path's error).
bool scale_double(DD sum, bool exact, int lowest, unsigned p, double e, double up, double& out) {
  Roundings r;
  if (exact && sum.h > 0 && std::ilogb(sum.h) + 2 - lowest <= static_cast<int>(p)) {
    if (!exact_roundings(sum, r)) return false;
  } else if (!decide(sum, e, r, false, up)) {
    return false;
  }
  out = r.d;
  return true;
}

NORMCHECK_FMA_CLONES
bool backward_row_clones(bool layer, const ForwardRow& fwd, std::span<const float> dy,
                         std::span<const float> gamma, unsigned scale_bits, BackwardRow& out,
                         double bs) {
  const int64_t d = fwd.d();
  const double dd_d = static_cast<double>(d);
  const double k = layer ? dd_d : 1.0;
  const double up = 1 + 0x1p-50 * bs;
  const double u2 = kU2 * bs;
  // The forward's bounds, scaled as this row's (bs = 1 but in the negative control).
  const double rho_dev = fwd.rho_dev * bs, rho_n = fwd.rho_n * bs, rho_c = fwd.rho_c * bs;
  bool ok = true;
  out.dx.resize(d);
  // Sums over the row: Sg, A_g, G, B.
  DD sg, a_g, G, B;
  bool a_g_exact = true;
  int g_field = 0x7ff;  // the smallest exponent field of a non-zero g
  for (int64_t i = 0; i < d; ++i) {
    const double g = gamma.empty() ? double{dy[i]} : double{gamma[i]} * double{dy[i]};
    if (!std::isfinite(g)) return false;
    sg = add_double(sg, g);
    a_g = add_double(a_g, std::fabs(g), a_g_exact);
    g_field = std::min(g_field, g == 0 ? 0x7ff : field(g));
    const DD t = mul(fwd.dev[i], DD{g, 0}, ok);
    G = add_signed(G, t);
    B = add_nonneg(B, magnitude(t));
  }
  if (!ok) return false;
  const double a_g_bound = std::fabs(a_g.h) * kSlack;
  const double b_bound = std::fabs(B.h) * kSlack;
  const double rho_t = rho_dev + 8 * u2;
  const double e_sg = 2.01 * dd_d * u2 * a_g_bound;
  const double e_g = (rho_t + 3.02 * dd_d * u2) * b_bound;

  // Scales.
  double sum_abs_g;
  if (!scale_double(a_g, a_g_exact, g_field - 1075, scale_bits,
                    (e_sg + p_bit_error(dd_d, scale_bits) * bs * a_g_bound) * kSlack, up, sum_abs_g))
    return false;
  out.mean_abs_g = sum_abs_g / dd_d;
  Roundings scale_rounding;
  const DD T = div(mul(B, fwd.c, ok), DD{dd_d, 0}, ok);
  const double rho_T = rho_t + 3.02 * dd_d * u2 + rho_c + 40 * u2;
  if (!decide(T, (rho_T + p_bit_error(dd_d + 5, scale_bits) * bs) * std::fabs(T.h) * kSlack,
              scale_rounding, false, up))
    return false;
  out.mean_abs_g_xhat = scale_rounding.d;

  // dx.
  const DD kG = mul(G, DD{k, 0}, ok);
  const double e_kG = k * e_g + 8 * u2 * std::fabs(kG.h);
  const DD w = div(fwd.c, fwd.n, ok);
  const double rho_w = rho_c + rho_n + 32 * u2;
  const double n_abs = std::fabs(fwd.n.h);
  const double sg_abs = std::fabs(sg.h);
  const double w_abs = std::fabs(w.h);
  const double scale_low = std::ldexp(1.0, -fwd.low);
  if (!ok) return false;
  for (int64_t i = 0; i < d; ++i) {
    const double g = gamma.empty() ? double{dy[i]} : double{gamma[i]} * double{dy[i]};
    DD a{g, 0};
    double e_a = 0;
    if (layer) {
      const DD kg = two_prod_dd(k, g);
      a = add_signed(kg, neg(sg));
      e_a = e_sg + 3.02 * u2 * (k * std::fabs(g) + sg_abs);
    }
    const DD aN = mul(a, fwd.n, ok);
    const double e_aN = (8 * u2 + rho_n) * std::fabs(aN.h) + e_a * n_abs;
    const DD b = mul(fwd.dev[i], kG, ok);
    const double e_b = rho_t * std::fabs(b.h) + std::fabs(fwd.dev[i].h) * e_kG;
    const DD M = add_signed(aN, neg(b));
    const double e_M = e_aN + e_b + 3.02 * u2 * (std::fabs(aN.h) + std::fabs(b.h));
    const DD dx = scale(mul(M, w, ok), -fwd.low);
    const double e_dx =
        scale_low * (w_abs * e_M + (rho_w + 8 * u2) * std::fabs(M.h) * w_abs) * kSlack;
    if (!ok || !decide(dx, e_dx, out.dx[i], true, up)) return false;
  }
  return ok;
}

NORMCHECK_FMA_CLONES
bool add_row_clones(const ForwardRow& fwd, std::span<const float> dy, std::vector<DD>& dy_xhat,
                    std::vector<DD>& abs_dy_xhat, std::vector<DD>& dy_sum, std::vector<DD>& abs_dy,
                    std::vector<char>& nonzero, std::vector<char>& dy_exact,
                    std::vector<char>& abs_dy_exact, std::vector<int>& dy_field) {
  bool ok = true;
  for (std::size_t j = 0; j < dy.size(); ++j) {
    const double y = dy[j];
    if (!std::isfinite(y)) return false;
    const DD t = mul(mul(fwd.dev[j], DD{y, 0}, ok), fwd.c, ok);
    dy_xhat[j] = add_signed(dy_xhat[j], t);
    abs_dy_xhat[j] = add_nonneg(abs_dy_xhat[j], magnitude(t));
    bool exact = dy_exact[j];
    dy_sum[j] = add_double(dy_sum[j], y, exact);
    dy_exact[j] = exact;
    bool abs_exact = abs_dy_exact[j];
    abs_dy[j] = add_double(abs_dy[j], std::fabs(y), abs_exact);
    abs_dy_exact[j] = abs_exact;
    dy_field[j] = std::min(dy_field[j], y == 0 ? 0xff : std::max(field(dy[j]), 1));
    nonzero[j] |= y != 0;
  }
  return ok;
}

}  // namespace

bool backward_row(bool layer, const ForwardRow& fwd, std::span<const float> dy,
                  std::span<const float> gamma, unsigned scale_bits, BackwardRow& out,
                  double bound_scale) {
  if (static_cast<int64_t>(dy.size()) != fwd.d() || fwd.d() < 1) return false;
  return backward_row_clones(layer, fwd, dy, gamma, scale_bits, out, bound_scale);
}

ColumnSums::ColumnSums(int64_t cols, double bound_scale)
    : dy_xhat_(cols), abs_dy_xhat_(cols), dy_(cols), abs_dy_(cols), nonzero_(cols, 0), dy_exact_(cols, 1),
      abs_dy_exact_(cols, 1), dy_field_(cols, 0xff),
      bs_(bound_scale) {}

void ColumnSums::add(const ForwardRow& fwd, std::span<const float> dy) {
  if (failed_) return;
  if (!fwd.has_state || dy.size() != dy_.size() || fwd.d() != static_cast<int64_t>(dy.size()) ||
      !add_row_clones(fwd, dy, dy_xhat_, abs_dy_xhat_, dy_, abs_dy_, nonzero_, dy_exact_,
                      abs_dy_exact_, dy_field_)) {
    failed_ = true;
    return;
  }
  rho_term_ = std::max(rho_term_, (fwd.rho_dev + fwd.rho_c + 16 * kU2) * bs_);
  ++additions_;
  ++rows_;
}

void ColumnSums::merge(const ColumnSums& other) {
  failed_ = failed_ || other.failed_ || other.dy_.size() != dy_.size();
  if (failed_) return;
  for (std::size_t j = 0; j < dy_.size(); ++j) {
    dy_xhat_[j] = add_signed(dy_xhat_[j], other.dy_xhat_[j]);
    abs_dy_xhat_[j] = add_nonneg(abs_dy_xhat_[j], other.abs_dy_xhat_[j]);
    bool exact = dy_exact_[j] && other.dy_exact_[j];
    dy_[j] = add_signed(dy_[j], other.dy_[j], exact);
    dy_exact_[j] = exact;
    bool abs_exact = abs_dy_exact_[j] && other.abs_dy_exact_[j];
    abs_dy_[j] = add_signed(abs_dy_[j], other.abs_dy_[j], abs_exact);
    abs_dy_exact_[j] = abs_exact;
    dy_field_[j] = std::min(dy_field_[j], other.dy_field_[j]);
    nonzero_[j] |= other.nonzero_[j];
  }
  rho_term_ = std::max(rho_term_, other.rho_term_);
  additions_ += other.additions_ + 1;
  rows_ += other.rows_;
}

// dbeta_j: the correct roundings of an exactly held sum (often a float
// midpoint, which no bound decides; an exact 0 is MPFR's +0), else decided
// within `e`.
bool ColumnSums::decide_dbeta(std::size_t j, double e, double up, Roundings& out) const {
  if (!dy_exact_[j]) return fast::decide(dy_[j], e, out, true, up);
  if (dy_[j].h == 0) {
    out = {0.0f, 0.0};
    return true;
  }
  return exact_roundings(dy_[j], out);
}

bool ColumnSums::decide(unsigned bits, Decided& out) const {
  if (failed_) return false;
  const std::size_t cols = dy_.size();
  out.dgamma.assign(cols, {});
  out.dbeta.assign(cols, {});
  out.sum_abs_dy_xhat.assign(cols, 0);
  out.sum_abs_dy.assign(cols, 0);
  const double up = 1 + 0x1p-50 * bs_;
  const double chain = 3.02 * static_cast<double>(additions_) * kU2 * bs_;
  const double rows = static_cast<double>(rows_);
  const double p_abs_dy_xhat = p_bit_error(2 * rows + 3, bits) * bs_;
  const double p_abs_dy = p_bit_error(rows, bits) * bs_;
  Roundings scale;
  for (std::size_t j = 0; j < cols; ++j) {
    if (!nonzero_[j]) continue;  // every sum is +0
    const double a = std::fabs(abs_dy_xhat_[j].h) * kSlack;
    const double y = std::fabs(abs_dy_[j].h) * kSlack;
    if (!fast::decide(dy_xhat_[j], (rho_term_ + chain) * a * kSlack, out.dgamma[j], true, up) ||
        !decide_dbeta(j, chain * y * kSlack, up, out.dbeta[j]) ||
        !fast::decide(abs_dy_xhat_[j], (rho_term_ + chain + p_abs_dy_xhat) * a * kSlack, scale,
                      false, up))
      return false;
    out.sum_abs_dy_xhat[j] = scale.d;
    if (!scale_double(abs_dy_[j], abs_dy_exact_[j], dy_field_[j] - 150, bits,
                      (chain + p_abs_dy) * y * kSlack, up, out.sum_abs_dy[j]))
      return false;
  }
  return true;
}

}  // namespace normcheck::fast
