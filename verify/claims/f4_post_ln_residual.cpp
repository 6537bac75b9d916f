// F4: a Post-LN norm's gamma/beta cannot be folded away: its output is the
// residual stream, and the skip connection carries it on with no Linear.
//
// Pre-LN block: h + F(LN(h; gamma, beta)) with F's first Linear reading the
// norm: folding changes nothing (F1). Post-LN block: z = LN1(x; gamma, beta)
// is the stream and the block computes LN2(z + W z + b). Folding gamma, beta
// into W gives LN2(xhat + W' xhat + b') = LN2(z + W z + b - (z - xhat)): the
// skip term z - xhat = (gamma - 1) xhat + beta is lost, and LN2 does not undo
// it. The smallest case: W = 0, b = 0, eps = 0, x = (1, 0, -1), gamma =
// (2, 1, 1), beta = 0: the model gives LN2(gamma xhat), the fold LN2(xhat) =
// xhat. normcheck_fold refuses a Post-LN fold (require_foldable).
#include <string>

#include "claim_format.h"
#include "exact_tensor.h"
#include "fold/fold.h"
#include "fold_exact.h"
#include "normcheck/claims.h"

namespace normcheck {

ClaimResult check_f4_post_ln_residual(const ClaimOptions& options) {
  using claims_text::fmt;
  ClaimResult result;
  const int d = options.full ? 32 : 12;
  const auto p = claims_fold::exact_post_ln(d, options.seed);
  bool refused = false;
  try {
    fold::require_foldable(fold::Placement::post_ln, "the Post-LN norm");
  } catch (const fold::FoldError&) {
    refused = true;
  }
  Series model{"Post-LN counterexample: the model's output LN2(gamma xhat)", "element", "value", false, false, {0, 1, 2}, p.model};
  Series folded{"the folded model's output LN2(xhat)", "element", "value", false, false, {0, 1, 2}, p.folded};
  result.series = {model, folded};
  // The pre-LN fold is the positive control: the comparison sees equality
  // where there is one.
  const bool control = p.pre_ln_fold < claims::kExactTolerance;
  const bool cannot_fold = p.post_ln_fold > claims::kExactTolerance;
  result.verdict = !control ? Verdict::unchecked : (cannot_fold && refused) ? Verdict::holds : Verdict::refuted;
  result.figure = fmt(
      "Post-LN folded vs model: %.3g relative (100 digits, d = %d); Pre-LN fold: %.1e; counterexample x = (1, 0, "
      "-1), gamma = (2, 1, 1), F = 0, eps = 0: model (%.6f, %.6f, %.6f), folded (%.6f, %.6f, %.6f); "
      "normcheck_fold %s a Post-LN fold",
      p.post_ln_fold, d, p.pre_ln_fold, p.model[0], p.model[1], p.model[2], p.folded[0], p.folded[1],
      p.folded[2], refused ? "refuses" : "DOES NOT refuse");
  result.explanation = fmt(
      "At 100 digits: a Pre-LN block x + W LN(x; gamma, beta) + b against x + W' LN(x; 1, 0) + b' (must agree "
      "below 1e-60), and a Post-LN block LN2(z + W z + b), z = LN1(x; gamma, beta), against the same with "
      "gamma, beta folded into W, b (gamma ~ 1 + 0.5 N, beta ~ 0.5 N, W, b Gaussian, eps 1e-5, 4 rows, seed "
      "%llu). The skip connection adds z itself, so the fold drops (gamma - 1) xhat + beta from the stream. "
      "Only the consumers of the norm's output inside the sublayer can absorb gamma; the residual copy cannot, "
      "and LN2 is not linear, so no later weight can undo it.",
      static_cast<unsigned long long>(options.seed));
  return result;
}

}  // namespace normcheck
