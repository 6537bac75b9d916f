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

// Internal: hidden from normcheck_verify's exported symbols, as reference_mp.h.
namespace normcheck {
namespace [[gnu::visibility("hidden")]] fast {

// A real's correct roundings to float and to double (round to nearest even,
// float subnormals, +-inf past the float overflow boundary).
struct Roundings {
  float f = 0;
  double d = 0;
};

// The outputs of one forward row, named as mp::NormRow names them.
struct ForwardRow {
  bool finite = true;  // always true for a decided row (non-finite rows are left to MPFR)
  Roundings mean, r;   // r: rstd (LayerNorm) or rrms (RMSNorm)
  std::vector<Roundings> xhat, y;
  double variance = 0, mean_abs_x = 0, max_abs_x = 0, eps_share = 0;
  int64_t d() const { return d_; }

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

}  // namespace fast
}  // namespace normcheck
