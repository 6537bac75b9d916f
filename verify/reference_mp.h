// Internal to normcheck_verify and its tests (not installed): the exact
// numerators behind reference.h, one row at a time, and the Ziv loop that
// turns them into correctly rounded floats and doubles.
//
// Every row is reduced to dyadic numerators that MPFR holds exactly (each
// operation gets the precision its operands' exponents require, and a non-zero
// ternary value is an error, not a rounding); only the last few operations of
// each output (a square root, a product, a quotient) round. Their error is
// bounded by a small multiple of 2^-p, and an output is accepted only when
// every real within that bound rounds to the same float and the same double;
// otherwise the final operations are redone at twice the precision.
// docs/semantics.md gives the identities and the error bounds.
//
// Arithmetic goes through MPFR on Boost-owned mpfr_float values rather than
// through Boost's operators: in Boost 1.74 the temporaries of an expression
// take the global default precision (in decimal digits).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <boost/multiprecision/mpfr.hpp>

// Internal: hidden from normcheck_verify's exported symbols (only the API of
// include/normcheck/ is public); tests link normcheck_reference_mp directly.
namespace normcheck {
namespace [[gnu::visibility("hidden")]] mp {

using Real = boost::multiprecision::mpfr_float;

// The MPFR value a Real owns, for calling MPFR directly.
inline mpfr_ptr raw(Real& v) { return v.backend().data(); }
inline mpfr_srcptr raw(const Real& v) { return v.backend().data(); }

// A NaN with exactly `bits` of precision.
Real make_real(unsigned bits);

// The precision the Ziv loop may reach before it gives up with
// std::runtime_error (a bug: an exact tie is computed exactly far below it).
inline constexpr unsigned kZivCapBits = 1u << 16;

// dst = a + b, a - b, a * b exactly: dst (not aliasing a or b) gets the
// precision the result needs. Infinities and NaN follow IEEE.
void exact_add(Real& dst, const Real& a, const Real& b);
void exact_sub(Real& dst, const Real& a, const Real& b);
void exact_mul(Real& dst, const Real& a, const Real& b);

// dst = sign(a) sqrt(a^2 d / den), rounded at dst's precision p through one
// quotient and one square root: relative error (1 + u)^(1/2) (1 + u) - 1
// <= 1.51u, u = 2^-p. Returns true when nothing rounded; that is the case
// whenever the result is dyadic (a float or a tie) and p holds a^2 d / den
// and its root. a and den exact; sq, sq_d: scratch.
bool signed_sqrt_ratio(Real& dst, const Real& a, long d, const Real& den, Real& sq, Real& sq_d);

// A float and a double, each the correct rounding (to nearest, ties to even,
// one rounding, with subnormals; +-inf past the overflow boundary) of one real.
struct Roundings {
  float f = 0;
  double d = 0;
};

// What is known of an approximation v of a real: equal to it (exact), or
// within 2^exp of it.
struct ErrorBound {
  bool exact = true;
  mpfr_exp_t exp = 0;
};

// The roundings of the real that `v` approximates within `error`, when every
// real within the error has the same float and the same double rounding
// (rounding to nearest is monotone, so checking v -+ 2^exp suffices). A
// non-finite v is exact: MPFR produces NaN/inf only by IEEE's rules from
// exact special values, never by overflow.
class RoundingDecider {
 public:
  bool decide(const Real& v, ErrorBound error, Roundings& out);
  // For the dgamma column sums only, once the Ziv loop reaches its cap: the
  // interval around v is then below 2^-65000 relative, and the one way it can
  // still straddle a rounding boundary is an exact midpoint formed by terms
  // that are not dyadic (dy xhat with xhat = m/3, say). The value is taken to
  // be that midpoint and rounded to even. This is an assumption, not a proof
  // (a sum of square roots that close to a midpoint without being on it is
  // not excluded by an argument here); docs/semantics.md says so.
  Roundings as_midpoint(const Real& v, ErrorBound error);

 private:
  Real lo_ = make_real(64), hi_ = make_real(64), step_ = make_real(2);
};

enum class Norm { layer, rms };

// One row of LayerNorm (or RMSNorm), evaluated in the extended reals with the
// semantics of docs/semantics.md. With k = d (LayerNorm) or 1 (RMSNorm):
//   D_i = k x_i - S (LayerNorm, S = sum x) or x_i (RMSNorm),
//   N   = sum D_i^2 + eps k^2 d,   c = sqrt(d / N),
//   mean = S / d, r = k c = 1/sqrt(N / (k^2 d)), xhat_i = D_i c,
//   dx_i = M_i c / N with M_i = (k g_i - [LayerNorm] Sg) N - k D_i G,
//   Sg = sum g, G = sum g_i D_i, g = gamma dy.
// S, D, N, Sg, G and M are exact. The buffers are reused for every row.
class NormRow {
 public:
  // start_bits: the working precision of the first attempt of the final
  // operations (the Ziv loop doubles it as needed).
  NormRow(Norm norm, unsigned start_bits);

  // The exact numerators of x (S, D, N) and the double statistics.
  void prepare(std::span<const float> x, float eps);

  // prepare(), then the decided mean, r, xhat (and y when `with_y`).
  // gamma/beta: empty for "no affine"; otherwise x.size() elements.
  void forward(std::span<const float> x, std::span<const float> gamma,
               std::span<const float> beta, float eps, bool with_y = true);

  // dx and the per-row scales, for the x of the last forward()/prepare().
  void backward(std::span<const float> dy, std::span<const float> gamma);

  // c = sqrt(d / N) at `bits` (NaN for a non-finite row), within relative
  // 2^(1 - bits) of the real c; exact when `exact` comes back true.
  const Real& c_at(unsigned bits, bool& exact);

  Norm norm() const { return norm_; }
  unsigned start_bits() const { return start_bits_; }
  int64_t d() const { return d_; }

  // prepare() results. Exact (dyadic) values:
  bool finite = true;        // every x is finite
  Real sum_x;                // S in the extended reals
  std::vector<Real> dev;     // D_i (first d() entries)
  Real norm_sq;              // N (+0 for a constant row with eps = 0)
  // Double statistics, each one rounding of an exact quotient: variance
  // (LayerNorm: sigma^2 = sum D^2 / d^3; RMSNorm: mean(x^2)), mean|x|,
  // eps share eps k^2 d / N; max|x| is exact.
  double variance = 0, mean_abs_x = 0, max_abs_x = 0, eps_share = 0;

  // forward() results, each correctly rounded (Ziv-decided).
  Roundings mean, r;
  std::vector<Roundings> xhat, y;  // first d() entries

  // backward() results.
  bool dy_finite = true;
  Real sum_g, sum_g_dev;           // Sg and G, exact
  std::vector<Real> dx_num;        // M_i, exact
  std::vector<Roundings> dx;       // correctly rounded
  double mean_abs_g = 0, mean_abs_g_xhat = 0;  // scales, from start_bits values

  // The highest precision the last forward() or backward() call used.
  unsigned bits_used = 0;

 private:
  void resize(int64_t d);
  void decide_forward(std::span<const float> gamma, std::span<const float> beta, bool with_y);
  const Real& a_from_double(double v);  // a_ = v, exactly

  Norm norm_;
  unsigned start_bits_;
  int64_t d_ = 0;
  Real k_, kkd_, eps_kkd_, sum_abs_x_;  // k, k^2 d, eps k^2 d, sum |x|: exact
  Real c_, t_, work_, work2_;           // working-precision values
  unsigned c_bits_ = 0;                 // precision c_ holds (0: stale)
  bool c_exact_ = false;
  long dev_exp_max_ = 0, dev_low_ = 0;  // every D_i is a multiple of 2^dev_low_ below 2^dev_exp_max_
  Real k_g_, a_, b_, e_, k_G_, n3_;     // exact scratch for M_i; N^3
  std::vector<char> pending_;           // per-element outputs still undecided
  RoundingDecider decider_;
};

// The column values of a backward problem (rows x cols, row-major dy and x):
// dgamma_j = sum_i dy_ij xhat_ij and dbeta_j = sum_i dy_ij, correctly
// rounded (dgamma: Ziv loop up to kZivCapBits, then as_midpoint), and the
// bound scales sum_i |dy_ij xhat_ij| and sum_i |dy_ij|, each the double
// nearest its first pass at `precision_bits` (reference_columns.cpp).
struct ColumnValues {
  std::vector<Roundings> dgamma, dbeta;
  std::vector<double> sum_abs_dy_xhat, sum_abs_dy;
};
ColumnValues column_sums(Norm norm, std::span<const float> dy, std::span<const float> x,
                         int64_t rows, int64_t cols, float eps, unsigned precision_bits);

}  // namespace mp
}  // namespace normcheck
