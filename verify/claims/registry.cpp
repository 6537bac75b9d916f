// The one ordered list of claim checks, in the order of shared/claims.md.
#include <vector>

#include "normcheck/claims.h"

namespace normcheck {

// ---- S*, A* (verify/claims/semantics_*.cpp, axes_*.cpp) ----
// ---- J* (verify/claims/jacobian_*.cpp, deepnorm_*.cpp) ----

std::span<const Claim> claim_table() {
  static const std::vector<Claim> table = {
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
