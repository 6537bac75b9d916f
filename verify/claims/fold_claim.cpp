// Decision for F1/F2:
//   - exact: Linear(Norm(x; gamma, beta)) and Linear'(Norm(x; 1, 0)) at 100
//     digits differ by less than kExactTolerance (1e-60) relative, for |gamma|
//     = 1 and for gamma spread over 2^+-20 and 2^+-60; the wrong-side fold
//     diag(gamma) W must differ by more (else the comparison cannot see a bad
//     fold, and the verdict is UNCHECKED);
//   - float: for every storage dtype and family whose fold is storable (no
//     W' entry beyond the format's range), folded and unfolded float32 results
//     differ by at most the sum of their derived bounds (fold_check.h), and
//     the wrong-side fold breaks that bound (the control).
// HOLDS when all of that is so; REFUTED when an exact mismatch or a float
// difference exceeds its limit while the controls are caught.
#include <cmath>
#include <limits>

#include "claim_format.h"
#include "exact_tensor.h"
#include "fold_claim.h"
#include "fold_exact.h"

namespace normcheck::claims_fold {

ClaimResult check_affine_fold(fold::NormKind norm, const ClaimOptions& options) {
  using claims_text::fmt;
  ClaimResult result;
  const int d = options.full ? 48 : 24, rows = options.full ? 8 : 4;
  double exact = 0;
  for (double range : {0.0, 20.0, 60.0})
    exact = std::max(exact, exact_fold_mismatch(norm, d, rows, range, false, options.seed));
  const double exact_control = exact_fold_mismatch(norm, d, rows, 0.5, true, options.seed);
  const auto sweep = float_sweep(norm, options.full, options.seed);
  const double float_control = wrong_side_float(norm, options.seed);

  double worst[3] = {0, 0, 0};
  long overflowed = 0;
  std::string where_overflow, detail;
  // Series k: 0 float32, 1 bf16, 2 f16 weights with float32 activations;
  // 3 bf16, 4 f16 with the norm's output rounded to the weights' dtype.
  Series ratio[5], bound_use[5];
  const char* names[5] = {"float32", "bf16", "f16", "bf16 (16-bit activations)", "f16 (16-bit activations)"};
  for (int k = 0; k < 5; ++k) {
    ratio[k] = {std::string(names[k]) + ": folded / unfolded RMS error (exact-result scale T)", "family (0 random, 1 gamma_wide, 2 gamma_near_zero, 3 near_overflow, 4 subnormal)", "ratio", false, true, {}, {}};
    bound_use[k] = {std::string(names[k]) + ": max |folded - unfolded| / (E_f + E_u)", "family", "fraction of the bound", false, true, {}, {}};
  }
  for (const SweepRow& row : sweep) {
    const int k = (row.storage == DType::f32 ? 0 : row.storage == DType::bf16 ? 1 : 2) + (row.storage_activations ? 2 : 0);
    const double family = static_cast<double>(static_cast<int>(row.family));
    const fold::FoldCheck& c = row.check;
    detail += fmt("%s/%s: err max folded %.2e unfolded %.2e, RMS folded %.2e unfolded %.2e, diff/bound %.3g%s; ",
                  names[k], std::string(fold::to_string(row.family)).c_str(), c.folded_error, c.unfolded_error,
                  c.folded_rms_error, c.unfolded_rms_error, c.diff_over_bound,
                  c.overflowed_weights ? fmt(" (%ld folded weights overflow)", c.overflowed_weights).c_str() : "");
    if (c.overflowed_weights) {
      overflowed += c.overflowed_weights;
      const std::string where = fmt("%s/%s", names[k > 2 ? k - 2 : k], std::string(fold::to_string(row.family)).c_str());
      if (where_overflow.find(where) == std::string::npos) where_overflow += (where_overflow.empty() ? "" : ", ") + where;
      continue;
    }
    worst[k > 2 ? k - 2 : k] = std::max(worst[k > 2 ? k - 2 : k], c.diff_over_bound);
    ratio[k].x.push_back(family);
    ratio[k].y.push_back(c.unfolded_rms_error > 0 ? c.folded_rms_error / c.unfolded_rms_error : 0);
    bound_use[k].x.push_back(family);
    bound_use[k].y.push_back(c.diff_over_bound);
  }
  for (int k = 0; k < 5; ++k) result.series.push_back(ratio[k]);
  for (int k = 0; k < 5; ++k) result.series.push_back(bound_use[k]);

  const bool controls_caught = exact_control > claims::kExactTolerance && float_control > 1;
  const bool exact_holds = exact < claims::kExactTolerance;
  const bool float_holds = worst[0] <= 1 && worst[1] <= 1 && worst[2] <= 1;
  result.verdict = !controls_caught ? Verdict::unchecked
                   : exact_holds && float_holds ? Verdict::holds
                                                : Verdict::refuted;
  result.figure = fmt(
      "exact (100 digits): max relative mismatch %.1e (gamma up to 2^+-60); float32 weights: max |folded - "
      "unfolded| / bound %.3g, bf16 %.3g, f16 %.3g (float32 and 16-bit activations); %ld folded weights overflow (%s: the fold is not storable); "
      "controls: diag(gamma) W differs by %.2g exactly and %.3g x the float bound",
      exact, worst[0], worst[1], worst[2], overflowed, where_overflow.empty() ? "none" : where_overflow.c_str(),
      exact_control, float_control);
  result.explanation = fmt(
      "Exact: d = %d, %d rows of x (mean r, scale 1 + r), W (d+3) x d and b Gaussian, beta Gaussian, gamma = "
      "+-2^U(-R, R) for R = 0, 20, 60; W' = W diag(gamma) and b' = W beta + b formed at 100 digits; verdict "
      "needs < 1e-60. Float: check_fold (docs/folding.md) over d = 16, 64, 256 (1024 with --full), 32 outputs, "
      "rows of Gaussian, spike, sign-aligned and cancelling xhat; weights in the storage dtype, float32 "
      "arithmetic, the norm's output kept in float32 or (16-bit act.) rounded to the weights' dtype, W' and b' folded in float64/double-double and rounded once. Errors are max |y - y*| / T, T = "
      "sum_j |W_ij| (|gamma_j xhat_j| + |beta_j|) + |b_i|. Seed %llu. %s",
      d, rows, static_cast<unsigned long long>(options.seed), detail.c_str());
  return result;
}

}  // namespace normcheck::claims_fold
