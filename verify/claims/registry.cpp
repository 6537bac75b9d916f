// The one ordered list of claim checks (S*, A*, then J*).
#include <vector>

#include "claim_sources.h"
#include "normcheck/claims.h"
#include "semantics.h"

namespace normcheck {

// ---- S*, A* (verify/claims/s*_*.cpp, a*_*.cpp): rows kClaimS1.. in semantics.h ----
// ---- J* (verify/claims/j1_*.cpp .. j8_*.cpp) ----
ClaimResult check_j1_layernorm_jacobian_norm(const ClaimOptions&);
ClaimResult check_j2_softmax_lemma(const ClaimOptions&);
ClaimResult check_j3_ffn_second_moment(const ClaimOptions&);
ClaimResult check_j4_sublayer_jacobian(const ClaimOptions&);
ClaimResult check_j5_jacobian_product(const ClaimOptions&);
ClaimResult check_j6_update_bound(const ClaimOptions&);
ClaimResult check_j7_deepnorm_update(const ClaimOptions&);
ClaimResult check_j8_xavier_gain(const ClaimOptions&);
// ---- F* (verify/claims/f1_*.cpp .. f4_*.cpp) ----
ClaimResult check_f1_layernorm_fold(const ClaimOptions&);
ClaimResult check_f2_rmsnorm_fold(const ClaimOptions&);
ClaimResult check_f3_layernorm_as_rmsnorm(const ClaimOptions&);
ClaimResult check_f4_post_ln_residual(const ClaimOptions&);

std::span<const Claim> claim_table() {
  static const std::vector<Claim> table = {
      // ---- F* ----
      {"F1", "Linear(LN(x; gamma, beta)) = Linear'(LN(x; 1, 0)), W' = W diag(gamma), b' = W beta + b; in float within a derived bound",
       NORMCHECK_SOURCE_LN_LINEAR_FOLDING, check_f1_layernorm_fold},
      {"F2", "RMSNorm's gamma folds the same way: W' = W diag(gamma)",
       NORMCHECK_SOURCE_LN_LINEAR_FOLDING " (its derivation applied to RMSNorm, which has no beta)", check_f2_rmsnorm_fold},
      {"F3", "LN(x) = RMSNorm(x M), M = I - 11^T/d: centring the residual stream's writers turns Pre-LN LayerNorm into RMSNorm",
       "SliceGPT (arXiv 2401.15024), TransformerLens", check_f3_layernorm_as_rmsnorm},
      {"F4", "A Post-LN norm's gamma/beta cannot be folded: its output is the residual stream",
       NORMCHECK_SOURCE_LN_LINEAR_FOLDING " (where its derivation stops: the residual path)", check_f4_post_ln_residual},
      // ---- S*, A* ----
      claims::kClaimS1, claims::kClaimS2, claims::kClaimS3, claims::kClaimS4, claims::kClaimS5,
      claims::kClaimA1, claims::kClaimA2, claims::kClaimA3,
      // ---- J* ----
      {"J1", "||dLN(z)/dz||_2 ~ sqrt(d)/||z||_2 (exact: 1/sqrt(sigma^2 + eps), d >= 3)",
       NORMCHECK_SOURCE_DEEPNET ", section 5.1, citing the LN Jacobian norm of Xiong et al. (arXiv 2002.04745)", check_j1_layernorm_jacobian_norm},
      {"J2", "Lemma 4.1: ||softmax(q) X|| <= max ||x_i|| = sqrt(d) (the paper wrote d)",
       NORMCHECK_SOURCE_DEEPNET ", section 4.1 (the paper's Lemma 4.1)", check_j2_softmax_lemma},
      {"J3", "FFN sublayer sum: E[z_i^2] = alpha^2 + v^2 w^2",
       NORMCHECK_SOURCE_DEEPNET ", section 5.1 (matrix derivation, FFN sublayer)", check_j3_ffn_second_moment},
      {"J4", "||dz/dx dx|| ~ sqrt(alpha^2 + v^2 w^2) ||dx||, ||dLN/dz|| ~ 1/sqrt(alpha^2 + v^2 w^2)",
       NORMCHECK_SOURCE_DEEPNET ", section 5.1 (matrix derivation, FFN sublayer)", check_j4_sublayer_jacobian},
      {"J5", "Sublayer Jacobian products decay like ((alpha^2 - v^2 w^2)/(alpha^2 + v^2 w^2))^(K/2)",
       NORMCHECK_SOURCE_DEEPNET ", section 4.3 supplement (products of sublayer Jacobians)", check_j5_jacobian_product},
      {"J6", "Per-sublayer bound and Theorem 4.2 ||dF|| <= sum sqrt(v^2 + w^2)/alpha ||dtheta_i||",
       NORMCHECK_SOURCE_DEEPNET ", sections 4.2 and 5 (the paper's Lemma / Theorem 4.2)", check_j6_update_bound},
      {"J7", "DeepNorm keeps the one-step model update O(eta) as depth grows; Post-LN's grows",
       NORMCHECK_SOURCE_DEEPNET ", section 4.3 (DeepNorm's alpha and beta; the paper's Table 1)", check_j7_deepnorm_update},
      {"J8", "xavier_normal_(gain = beta) scales the output norm by beta; 1/n_in vs 2/(n_in+n_out) is a constant",
       NORMCHECK_SOURCE_DEEPNET ", section 3 (xavier-normal initialization)", check_j8_xavier_gain},
  };
  return table;
}

const Claim* find_claim(std::string_view id) {
  for (const Claim& claim : claim_table())
    if (claim.id == id) return &claim;
  return nullptr;
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::holds: return "HOLDS";
    case Verdict::holds_approximately: return "HOLDS_APPROXIMATELY";
    case Verdict::refuted: return "REFUTED";
    case Verdict::unchecked: return "UNCHECKED";
  }
  return "?";
}

}  // namespace normcheck
