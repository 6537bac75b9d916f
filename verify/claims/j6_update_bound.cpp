// J6 (DeepNet Lemma / Theorem 4.2, as re-derived in seed 003): per sublayer,
// to first order,
//   ||dx_{l+1}|| <= ||dx_l|| + sqrt(v^2 + w^2)/alpha ||dtheta_l||,
// summed: ||dF|| <= RHS = sum_i c_i ||dtheta_i||, c_i = sqrt(v^2 + w^2)/alpha.
// Measured on the real stack of J7 (model_update.h) after one first-order SGD
// step (the exact JVP), with v = w = beta (the nominal gains), ||.|| Frobenius
// over all tokens and theta_i all weights of sublayer i (W^Q, W^K included).
//
// Units. The derivation works with scalar tokens, E[x^2] = 1; a token of an LN
// output in d dimensions has ||x|| = sqrt(d), and df/dtheta is linear in x, so
// the d-dimensional statement carries a factor sqrt(d):
//   ||dF|| ~ sqrt(d) * RHS,  i.e.  ||dF|| / (sqrt(d) RHS) ~ 1,
// the per-coordinate (unit-norm-token) comparison. That ratio decides the verdict.
//
// What the literal ratio measures. With L = <R, F>, ||R|| = 1, the SGD step
// dtheta = -eta g gives, to first order, <R, dF> = -eta ||g||^2, so
// ||dF|| >= eta ||g||^2 (Cauchy-Schwarz), while RHS = eta sum c_i ||g_i||
// <= eta sqrt(sum c_i^2) ||g|| (Cauchy-Schwarz again). Hence
//   ||dF|| / RHS >= ||g|| / sqrt(sum c_i^2),
// whatever the model; for DeepNorm sum c_i^2 = 2N * 2 beta^2 / alpha^2 = 1, so
// the ratio is at least ||g||. A ratio above 1 is therefore no finding by
// itself; the per-coordinate ratio and its flatness in d and N are.
//
// The dropped factor: the derivation replaces (alpha + v w)/sqrt(alpha^2 + v^2 w^2)
// >= 1 by 1; kept, it would compound to ~exp(2N beta^2/alpha). The measured gain
// of a sublayer on an input change is reported next to it.
#include <cmath>
#include <vector>

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

namespace {

using claims_text::fmt;

struct Case {
  int layers, width, tokens;
  bool deepnorm;  // false: Post-LN (alpha = 1, v = w = 1), outside the theorem's v, w < 1, alpha > 1
};

struct CaseResult {
  double literal = 0;         // ||dF|| / RHS
  double per_coordinate = 0;  // ||dF|| / (sqrt(d) RHS)
  double lower_bound = 0;     // ||g|| / sqrt(sum c_i^2): the literal ratio cannot be below this
  double gradient_norm = 0;   // ||g||
  double sublayer = 0;        // worst per-sublayer ratio, literal
  double sublayer_per_coordinate = 0;  // the same with sqrt(d) c_i
  double mean_input_gain = 1; // geometric mean of measured sublayer input gains
  double dropped = 1;         // (alpha + v w)/sqrt(alpha^2 + v^2 w^2)
};

CaseResult measure(const Case& k, uint64_t seed) {
  transformer::Shape shape;
  shape.layers = k.layers;
  shape.width = k.width;
  shape.ffn = 4 * k.width;
  shape.tokens = k.tokens;
  const transformer::Residual r =
      k.deepnorm ? transformer::deepnorm_encoder(k.layers) : transformer::Residual{1, 1};
  claims_deepnorm::UpdateOptions o;
  o.finite_step = o.adam_step = false;
  o.per_sublayer = true;
  const auto m = claims_deepnorm::measure_update(shape, r, seed, o);
  const double gain = std::sqrt(2.0) * r.beta / r.alpha;
  const double root_d = std::sqrt(static_cast<double>(k.width));
  CaseResult out;
  out.literal = m.sgd_per_eta / m.theorem_rhs_per_eta;
  out.per_coordinate = out.literal / root_d;
  out.gradient_norm = std::sqrt(m.gradient_squared);
  out.lower_bound = out.gradient_norm / std::sqrt(m.rhs_gain_squared);
  out.sublayer = claims_jacobian::worst_sublayer_bound_ratio(m.state_change, m.param_change, gain);
  out.sublayer_per_coordinate =
      claims_jacobian::worst_sublayer_bound_ratio(m.state_change, m.param_change, gain * root_d);
  double log_gain = 0;
  for (double a : m.input_amplification) log_gain += std::log(a);
  if (!m.input_amplification.empty()) out.mean_input_gain = std::exp(log_gain / m.input_amplification.size());
  out.dropped = (r.alpha + r.beta * r.beta) / std::hypot(r.alpha, r.beta * r.beta);
  return out;
}

}  // namespace

ClaimResult check_j6_update_bound(const ClaimOptions& options) {
  ClaimResult result;
  const std::vector<int> widths = {16, 64, 256};
  const std::vector<int> depths = options.full ? std::vector<int>{1, 16, 64} : std::vector<int>{1, 16};
  const std::vector<int> token_counts = options.full ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 16};
  const int post_deep = options.full ? 64 : 8;

  std::vector<Series> per_coordinate, literal;
  double pc_low = 1e300, pc_high = 0, sub_pc_high = 0, lower_bound_slack = 1e300;
  std::string literal_by_width, post_text, detail;
  uint64_t case_seed = options.seed;
  for (int n : depths) {
    for (int tokens : token_counts) {
      Series pc{fmt("DeepNorm N=%d, n=%d tokens: ||dF|| / (sqrt(d) RHS)", n, tokens), "width d",
                "per-coordinate ratio (1 = as derived)", true, false, {}, {}};
      Series lit{fmt("DeepNorm N=%d, n=%d tokens: ||dF|| / RHS", n, tokens), "width d", "ratio", true, true, {}, {}};
      for (int d : widths) {
        const CaseResult c = measure({n, d, tokens, true}, case_seed++);
        pc_low = std::min(pc_low, c.per_coordinate);
        pc_high = std::max(pc_high, c.per_coordinate);
        sub_pc_high = std::max(sub_pc_high, c.sublayer_per_coordinate);
        lower_bound_slack = std::min(lower_bound_slack, c.literal / c.lower_bound);
        pc.x.push_back(d), pc.y.push_back(c.per_coordinate);
        lit.x.push_back(d), lit.y.push_back(c.literal);
        if (n == 16 && tokens == 16)
          literal_by_width += fmt("%s%.3g (d=%d, sqrt(d)=%.3g)", literal_by_width.empty() ? "" : ", ",
                                  c.literal, d, std::sqrt(static_cast<double>(d)));
        detail += fmt("N=%d n=%d d=%d: literal %.3g, per-coordinate %.3f, ||g|| %.3g, per-sublayer %.3g "
                      "(per-coordinate %.3f), input gain %.4f vs dropped factor %.4f; ",
                      n, tokens, d, c.literal, c.per_coordinate, c.gradient_norm, c.sublayer,
                      c.sublayer_per_coordinate, c.mean_input_gain, c.dropped);
      }
      per_coordinate.push_back(std::move(pc));
      literal.push_back(std::move(lit));
    }
  }
  Series sqrt_d{"sqrt(d), the units factor", "width d", "ratio", true, true, {}, {}};
  for (int d : widths) sqrt_d.x.push_back(d), sqrt_d.y.push_back(std::sqrt(static_cast<double>(d)));
  literal.push_back(sqrt_d);

  // Post-LN (alpha = 1, v = w = 1): outside the theorem's assumptions.
  Series post{"Post-LN (outside v, w < 1, alpha > 1), n = 16: ||dF|| / RHS", "layers N", "ratio", true, true, {}, {}};
  Series post_pc = post;
  post_pc.name = "Post-LN (outside v, w < 1, alpha > 1), n = 16: ||dF|| / (sqrt(d) RHS)";
  double post_high = 0, post_pc_high = 0;
  for (int n : {1, post_deep}) {
    const CaseResult c = measure({n, 64, 16, false}, case_seed++);
    post.x.push_back(n), post.y.push_back(c.literal);
    post_pc.x.push_back(n), post_pc.y.push_back(c.per_coordinate);
    post_high = std::max(post_high, c.literal);
    post_pc_high = std::max(post_pc_high, c.per_coordinate);
    detail += fmt("Post-LN N=%d d=64: literal %.3g, per-coordinate %.3g; ", n, c.literal, c.per_coordinate);
  }

  for (Series& s : per_coordinate) result.series.push_back(std::move(s));
  for (Series& s : literal) result.series.push_back(std::move(s));
  result.series.push_back(post);
  result.series.push_back(post_pc);

  // Decision, fixed before measuring: Theorem 4.2 holds approximately when, inside
  // its assumptions (DeepNorm), the per-coordinate ratio is within a factor 2 of 1
  // for every d, N and n measured (same_order).
  const bool holds = claims_deepnorm::same_order(pc_low) && claims_deepnorm::same_order(pc_high);
  result.verdict = holds ? Verdict::holds_approximately : Verdict::refuted;
  const std::string grid = fmt("d in {16, 64, 256}, N in {%s}, n in {%s} tokens",
                               options.full ? "1, 16, 64" : "1, 16", options.full ? "1, 4, 16" : "1, 16");
  result.figure = fmt(
      "per coordinate (unit-norm tokens), ||dF|| / (sqrt(d) RHS) = %.3f..%.3f for DeepNorm over %s; "
      "literal ||dF||/RHS = %s: the gap is the units factor sqrt(d), and the linear loss forces "
      "||dF||/RHS >= ||g||; Post-LN's up to %.3gx (per coordinate %.3g) is outside the theorem "
      "(needs v, w < 1, alpha > 1)",
      pc_low, pc_high, grid.c_str(), literal_by_width.c_str(), post_high, post_pc_high);
  result.explanation = fmt(
      "Exact first-order SGD step (forward-mode JVP of F in the direction -g) on L = <R, F>, "
      "||R||_F = 1, 4 heads, FFN 4d, DeepNorm alpha = (2N)^(1/4), v = w = beta = (8N)^(-1/4); "
      "seeds %llu.. (one per case). The theorem is derived for scalar tokens with E[x^2] = 1; "
      "a d-dimensional LN output token has norm sqrt(d), so in these units ||dF|| is sqrt(d) times "
      "the scalar prediction. Divided by sqrt(d), the ratio is %.3f..%.3f across %s: the N-scaling "
      "and the constant both survive, only the units differ. Per sublayer the same reading gives "
      "||dx_{l+1}|| / (||dx_l|| + sqrt(d) c ||dtheta_l||) <= %.3f. What the literal ratio measures: "
      "with this linear loss <R, dF> = -eta ||g||^2, so ||dF||/eta >= ||g||^2, while "
      "RHS/eta = sum c_i ||g_i|| <= sqrt(sum c_i^2) ||g|| = ||g|| for DeepNorm (2N c^2 = 1); the "
      "ratio is therefore at least ||g|| for any model (measured: never below %.3g times that "
      "bound). J6's largest literal ratio, %.3gx, is Post-LN (alpha = 1, v = w = 1), which "
      "violates the theorem's assumptions v, w < 1 < alpha; it is not evidence against the "
      "theorem. Cases: %s The dropped factor (alpha+vw)/sqrt(alpha^2+v^2w^2) >= 1: the measured "
      "gain of a sublayer on an input change is ~1 for DeepNorm, below that factor, so replacing "
      "it by 1 is the better model (J7 compares the products up to N = 1000).",
      static_cast<unsigned long long>(options.seed), pc_low, pc_high, grid.c_str(), sub_pc_high,
      lower_bound_slack, post_high, detail.c_str());
  return result;
}

}  // namespace normcheck
