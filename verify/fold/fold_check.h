// Folded against unfolded evaluation in float32, both against the exact
// result, each held to its derived bound (docs/folding.md, "Error bound").
//
// The model: the normalized row xhat (float32, the norm's output without
// affine) is given, the same for both paths; weights are storage values
// (float32, bf16 or f16) widened exactly to float32; every operation is a
// float32 operation, the dot product summed left to right and the bias added last.
//   unfolded: a_j = fl(fl(gamma_j xhat_j) + beta_j), y_i = fl(sum_j W_ij a_j + b_i)
//   folded:   y'_i = fl(sum_j W'_ij xhat_j + b'_i)
//   exact:    y*_i = sum_j W_ij (gamma_j xhat_j + beta_j) + b_i (real arithmetic)
// With storage_activations (a bf16/f16 model, whose norm writes its output in
// the storage format before the Linear reads it): the unfolded path reads
// round_s(a_j), the folded one round_s(xhat_j); the rest is unchanged.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "fold.h"

namespace normcheck::fold {

// One Linear consumer of a norm: the stored parameters before and after the fold.
struct FoldCase {
  Vector gamma, beta;  // beta empty: RMSNorm or no bias
  Linear original;     // W, b as stored
  Linear folded;       // W', b' as stored
  DType storage = DType::f32;
  bool storage_activations = false;  // the norm's output rounded to `storage` (no effect for f32)
};

struct FoldCheck {
  long elements = 0;
  // max over outputs of |y' - y| / (E_f + E_u): above 1 breaks the bound.
  double diff_over_bound = 0;
  // max |y' - y*| / E_f and |y - y*| / E_u.
  double folded_over_bound = 0, unfolded_over_bound = 0;
  // max |y' - y*| / T and |y - y*| / T, T = sum_j |W_ij| (|gamma_j xhat_j| + |beta_j|) + |b_i|:
  // the errors on one scale, to say which path is more accurate and by how much.
  double folded_error = 0, unfolded_error = 0;
  // The same, root mean square over the outputs.
  double folded_rms_error = 0, unfolded_rms_error = 0;
  // max E_f / T and E_u / T: the two bounds on the same scale.
  double folded_bound = 0, unfolded_bound = 0;
  long overflowed_weights = 0;  // entries of W' or b' that rounded to infinity
  long nonfinite_outputs = 0;   // folded outputs that are not finite where y* is
  long unfolded_overflows = 0;  // unfolded activations gamma xhat + beta beyond the storage range (inf)
  // Outputs of the unfolded model that are not finite because an activation
  // overflowed: not compared (the folded output is still held to E_f).
  long unfolded_nonfinite_outputs = 0;
  std::string worst;            // where diff_over_bound was largest: "row r, output i: ..."
  // The fold is verified: folded within E_f of the exact result, within
  // E_f + E_u of the unfolded one, and every folded weight finite.
  bool within_bound() const { return diff_over_bound <= 1 && folded_over_bound <= 1 && overflowed_weights == 0; }
};

// Runs both paths on every row of xhat (rows x d, float32 values).
FoldCheck check_fold(const FoldCase& c, std::span<const std::vector<float>> xhat_rows);

// Merges b into a (maxima, sums of squares by element counts).
void merge(FoldCheck& a, const FoldCheck& b);

// One centred column (a Linear writer) or row (an embedding): `after` should
// be v - mean(v), each entry rounded once to `storage`.
struct CentringCheck {
  double sum_over_bound = 0;    // |sum after| / its bound: the centred vector has mean ~0
  double entry_over_bound = 0;  // max_i |after_i - (v_i - mean)| / its bound: and is v's centring
  long overflowed = 0;
  bool ok() const { return sum_over_bound <= 1 && entry_over_bound <= 1 && overflowed == 0; }
};
CentringCheck check_centring(const Vector& before, const Vector& after, DType storage);

}  // namespace normcheck::fold
