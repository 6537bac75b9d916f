// The one ordered list of claim checks, in the order of shared/claims.md.
#include <vector>

#include "normcheck/claims.h"
#include "semantics.h"

namespace normcheck {

// ---- S*, A* (verify/claims/s*_*.cpp, a*_*.cpp): rows kClaimS1.. in semantics.h ----
// ---- J* (verify/claims/j1_*.cpp .. j8_*.cpp) ----
ClaimResult check_j7_deepnorm_update(const ClaimOptions&);

std::span<const Claim> claim_table() {
  static const std::vector<Claim> table = {
      // ---- S*, A* ----
      claims::kClaimS1, claims::kClaimA1, claims::kClaimA2, claims::kClaimA3,
      // ---- J* ----
      {"J7", "DeepNorm keeps the one-step model update O(eta) as depth grows; Post-LN's grows",
       "seed 003 (DeepNet, arXiv 2203.00555, Section 4 and Table 1)", check_j7_deepnorm_update},
  };
  return table;
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
