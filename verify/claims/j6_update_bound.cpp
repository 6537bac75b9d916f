// J6 (seed 003; DeepNet Lemma / Theorem 4.2): per sublayer, to first order,
//   ||dx_{l+1}|| <= ||dx_l|| + sqrt(v^2 + w^2)/alpha ||dtheta_l||,
// summed: ||dF|| <= sum_i sqrt(v^2 + w^2)/alpha ||dtheta_i||. The derivation
// replaces (alpha + v w)/sqrt(alpha^2 + v^2 w^2) >= 1 by 1; kept, it would
// compound to ~exp(2N beta^2/alpha). Measured on the real stack of J7
// (model_update.h) after one first-order SGD step, with v = w = beta (the
// nominal gains), ||.|| Frobenius over all tokens and theta_i all weights of
// sublayer i (W^Q, W^K included).
#include <cmath>

#include "claim_format.h"
#include "j_controls.h"
#include "model_update.h"
#include "normcheck/claims.h"

namespace normcheck {
namespace claims_jacobian {

double worst_sublayer_bound_ratio(const std::vector<double>& state_change,
                                  const std::vector<double>& param_change, double gain) {
  double worst = 0;
  for (std::size_t s = 0; s < state_change.size(); ++s) {
    const double before = s == 0 ? 0.0 : state_change[s - 1];
    worst = std::max(worst, state_change[s] / (before + gain * param_change[s]));
  }
  return worst;
}

}  // namespace claims_jacobian

ClaimResult check_j6_update_bound(const ClaimOptions& options) {
  using claims_text::fmt;
  ClaimResult result;
  const int deep = options.full ? 64 : 8;
  struct Case {
    int layers, width;
    bool deepnorm;
  };
  const Case cases[] = {{1, 16, true}, {1, 64, true},      {deep, 16, true},
                        {deep, 64, true}, {1, 64, false}, {deep, 64, false}};
  Series sublayer{"max_s ||dx_{s+1}|| / (||dx_s|| + sqrt(v^2+w^2)/alpha ||dtheta_s||)", "case",
                  "ratio (> 1: bound fails)", false, true, {}, {}};
  Series theorem{"||dF|| / Theorem 4.2 right-hand side", "case", "ratio", false, true, {}, {}};
  Series gains{"geometric mean of measured sublayer input gain", "case", "gain", false, false, {}, {}};
  Series kept{"(alpha + v w)/sqrt(alpha^2 + v^2 w^2), the dropped factor", "case", "gain", false, false, {}, {}};
  std::string counter, detail;
  double worst_sub = 0, thm_low = 1e300, thm_high = 0;
  for (int c = 0; c < 6; ++c) {
    const Case& k = cases[c];
    transformer::Shape shape;
    shape.layers = k.layers;
    shape.width = k.width;
    shape.ffn = 4 * k.width;
    const transformer::Residual r =
        k.deepnorm ? transformer::deepnorm_encoder(k.layers) : transformer::Residual{1, 1};
    claims_deepnorm::UpdateOptions o;
    o.finite_step = o.adam_step = false;
    o.per_sublayer = true;
    const auto m = claims_deepnorm::measure_update(shape, r, options.seed + c, o);
    const double gain = std::sqrt(2.0) * r.beta / r.alpha;
    const double sub = claims_jacobian::worst_sublayer_bound_ratio(m.state_change, m.param_change, gain);
    const double thm = m.sgd_per_eta / m.theorem_rhs_per_eta;
    double log_gain = 0;
    for (double a : m.input_amplification) log_gain += std::log(a);
    const double mean_gain = m.input_amplification.empty() ? 1 : std::exp(log_gain / m.input_amplification.size());
    const double dropped = (r.alpha + r.beta * r.beta) / std::hypot(r.alpha, r.beta * r.beta);
    worst_sub = std::max(worst_sub, sub);
    thm_low = std::min(thm_low, thm);
    thm_high = std::max(thm_high, thm);
    const std::string name = fmt("%s N=%d d=%d", k.deepnorm ? "DeepNorm" : "Post-LN", k.layers, k.width);
    if (counter.empty() && (sub > 1 || thm > 1))
      counter = fmt("%s: per-sublayer ratio %.3g, ||dF||/RHS %.3g", name.c_str(), sub, thm);
    detail += fmt("%s: sublayer %.3g, theorem %.3g, input gain %.4f vs dropped factor %.4f; ",
                  name.c_str(), sub, thm, mean_gain, dropped);
    for (Series* s : {&sublayer, &theorem, &gains, &kept}) s->x.push_back(c);
    sublayer.y.push_back(sub);
    theorem.y.push_back(thm);
    gains.y.push_back(mean_gain);
    kept.y.push_back(dropped);
  }
  result.series = {sublayer, theorem, gains, kept};
  result.verdict = counter.empty() ? Verdict::holds_approximately : Verdict::refuted;
  result.figure = counter.empty()
                      ? fmt("bounds hold: worst per-sublayer ratio %.3g, ||dF||/RHS %.3g..%.3g", worst_sub,
                            thm_low, thm_high)
                      : fmt("smallest counterexample %s; ||dF||/RHS %.3g..%.3g over all cases", counter.c_str(),
                            thm_low, thm_high);
  result.explanation = fmt(
      "One first-order SGD step (eta = 1e-6) on L = <R, F>, ||R|| = 1, 16 tokens, 4 heads, FFN 4d; seed "
      "%llu. %s The bound fails by a factor that grows with the width roughly like sqrt(d) (per-case "
      "numbers above): the scalar derivation takes E[x^2] = 1 where a token of an LN output has ||x|| = sqrt(d), so "
      "||df/dtheta|| carries a factor ||x|| the bound leaves out; and ||dtheta|| counts W^Q, W^K too. "
      "The N-scaling survives (J7), the constant does not. The dropped factor: the measured gain of a "
      "sublayer on an input change is ~1 for DeepNorm, well below (alpha+vw)/sqrt(alpha^2+v^2w^2), so "
      "replacing it by 1 is the better model; keeping it would predict exp(2N beta^2/alpha) growth "
      "that does not happen (J7 compares the two products up to N = 1000).",
      static_cast<unsigned long long>(options.seed), detail.c_str());
  return result;
}

}  // namespace normcheck
