// Internal to normcheck_verify and its tests (not installed): the multiprecision
// values behind reference.h, one row at a time, so tests can hold the
// reference's unrounded numbers against independent computations.
//
// Arithmetic goes through MPFR on Boost-owned mpfr_float values rather than
// through Boost's operators: in Boost 1.74 the temporaries of an expression
// take the global default precision (in decimal digits), which would silently
// cap the working precision. Every value here has exactly `precision_bits`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <boost/multiprecision/mpfr.hpp>

namespace normcheck::mp {

using Real = boost::multiprecision::mpfr_float;

// The MPFR value a Real owns, for calling MPFR directly.
inline mpfr_ptr raw(Real& v) { return v.backend().data(); }
inline mpfr_srcptr raw(const Real& v) { return v.backend().data(); }

// A NaN with exactly `bits` of precision.
Real make_real(unsigned bits);

// The value correctly rounded to float (round to nearest even, one rounding;
// beyond the float range: +-inf) and to double.
float round_to_float(const Real& v);
double round_to_double(const Real& v);

enum class Norm { layer, rms };

// One row of LayerNorm (or RMSNorm) at the working precision, evaluated in the
// extended reals with the semantics of docs/semantics.md. The buffers are
// allocated once and reused for every row of every call.
class NormRow {
 public:
  NormRow(Norm norm, unsigned precision_bits);

  // mean, variance, r, xhat (and y when `with_y`) of x. gamma/beta: empty for
  // "no affine"; otherwise x.size() elements.
  void forward(std::span<const float> x, std::span<const float> gamma,
               std::span<const float> beta, float eps, bool with_y = true);

  // dx and the per-row scales, for the x of the last forward() call.
  void backward(std::span<const float> dy, std::span<const float> gamma);

  Norm norm() const { return norm_; }
  unsigned precision_bits() const { return bits_; }
  int64_t d() const { return d_; }

  // forward() results.
  bool finite = true;   // every x is finite
  Real mean;            // mean(x) in the extended reals
  Real variance;        // LayerNorm: mean((x - mean)^2); RMSNorm: mean(x^2)
  Real r;               // 1/sqrt(variance + eps); NaN for a non-finite row
  Real mean_abs_x, max_abs_x;
  Real eps_share;       // eps / (variance + eps)
  std::vector<Real> xhat, y;  // first d() entries valid

  // backward() results.
  bool dy_finite = true;
  Real mean_g, mean_g_xhat;          // g = gamma * dy
  Real mean_abs_g, mean_abs_g_xhat;
  std::vector<Real> dx;              // first d() entries valid

 private:
  void resize(int64_t d);

  Norm norm_;
  unsigned bits_;
  int64_t d_ = 0;
  Real tmp_, tmp2_, eps_;
  Real sd_;  // sqrt(variance + eps) = 1/r
  std::vector<Real> g_;
};

}  // namespace normcheck::mp
