// F1-F4 at 100 decimal digits (Boost.Multiprecision over MPFR, in
// fold_exact.cpp only): the folded and unfolded forms computed as two honest
// evaluations whose difference is measured at full precision, and the float
// sweeps of the folding library against its derived bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fold/families.h"

namespace normcheck::claims_fold {

// max over outputs of |Linear(Norm(x; gamma, beta)) - Linear'(Norm(x; 1, 0))|
// over max |Linear(Norm(x; gamma, beta))|, with W' = W diag(gamma) and
// b' = W beta + b formed at 100 digits; gamma = +-2^U(-r, r). wrong_side:
// W' = diag(gamma) W instead (square W), the negative control.
double exact_fold_mismatch(fold::NormKind norm, int d, int rows, double gamma_log2_range, bool wrong_side,
                           uint64_t seed);

struct Centring {
  double ln_vs_rms_of_centred = 0;  // max |LN(x; eps) - RMSNorm(x M; eps)| / max |LN|
  double uncentred_control = 0;     // max |LN(x) - RMSNorm(x)| / max |LN|, x with a mean
  double unit_norm_d_eps = 0;       // |LN - sqrt(d) xM / sqrt(||xM||^2 + d eps)| (the unit-norm form, eps scaled by d)
  double unit_norm_same_eps = 0;    // the same with eps unscaled: what the eps handling changes
  double predicted_same_eps = 0;    // (d - 1) eps / (2 d sigma^2) at the smallest sigma (first order)
  double stream = 0;                // Pre-LN stream with centred writers: consumer outputs, LN vs RMSNorm
};
// Rows with standard deviation sigma (and a mean of 3) at d, eps.
Centring exact_centring(int d, int rows, double sigma, double eps, uint64_t seed);

struct PostLn {
  double pre_ln_fold = 0;   // Pre-LN block h + F(LN(h)) folded vs unfolded (exact identity)
  double post_ln_fold = 0;  // Post-LN block LN2(z + F(z)), z = LN1(x), folded into F only
  // The 3-element counterexample: x = (1, 0, -1), gamma = (2, 1, 1), beta = 0,
  // F = 0, eps = 0: the model gives LN2(gamma xhat), the fold LN2(xhat).
  std::vector<double> model, folded;
};
PostLn exact_post_ln(int d, uint64_t seed);

// The float sweep of F1/F2: per storage dtype and family, check_fold merged
// over several shapes, and the fold's negative control.
struct SweepRow {
  DType storage;
  bool storage_activations;  // the norm's output rounded to the storage dtype (bf16, f16 rows only)
  fold::Family family;
  fold::FoldCheck check;
};
std::vector<SweepRow> float_sweep(fold::NormKind norm, bool full, uint64_t seed);
// diff_over_bound of the wrong-side fold, smallest over the dtypes.
double wrong_side_float(fold::NormKind norm, uint64_t seed);

}  // namespace normcheck::claims_fold
