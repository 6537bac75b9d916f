// Claim checks: statements about LayerNorm from blog posts and papers, checked by computation.
//
// Each claim is a row of claim_table() (verify/claims/registry.cpp is the one
// ordered list, one claim or one closely related group per file). A check ends
// in a verdict with the figure that decides it, and the series behind the
// figure so reports can plot it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace normcheck {

enum class Verdict { holds, holds_approximately, refuted, unchecked };

// "HOLDS", "HOLDS_APPROXIMATELY", "REFUTED", "UNCHECKED" (the JSON contract).
std::string_view to_string(Verdict verdict);

// One plotted line: y against x, with labels a reader understands.
struct Series {
  std::string name;
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<double> x, y;
};

struct ClaimResult {
  Verdict verdict = Verdict::unchecked;
  std::string figure;       // the number(s) that decide the verdict, one line
  std::string explanation;  // a paragraph: what was computed, over what range, what it means
  std::vector<Series> series;
};

struct ClaimOptions {
  uint64_t seed = 20261121;  // every random claim prints and uses this
  bool full = false;         // the full sweeps (nightly); default is the fast subset
};

struct Claim {
  std::string_view id;      // "S1", "J7", ... as in docs/claims.md
  std::string_view title;   // one line
  std::string_view source;  // the document: its title and what it derives (verify/claims/claim_sources.h)
  ClaimResult (*check)(const ClaimOptions&);
};

std::span<const Claim> claim_table();

// The row of claim_table() with this id, or nullptr.
const Claim* find_claim(std::string_view id);

}  // namespace normcheck
