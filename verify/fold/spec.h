// The fold spec: which norm feeds which Linears, and which writers of a
// Pre-LN residual stream to centre. JSON (docs/folding.md, "The spec"):
//   {"norms": [{"name": "blocks.0.ln_1",              (optional: a label; default the weight's name)
//               "kind": "layernorm" | "rmsnorm",
//               "placement": "pre_ln" | "post_ln" | "none",
//               "weight": "<gamma tensor>", "bias": "<beta tensor>" (layernorm, optional),
//               "consumers": [{"weight": "<W>", "bias": "<b>" (optional),
//                              "new_bias": "<name>" (optional: create b' here when W has no bias),
//                              "layout": "out_in" (default, nn.Linear) | "in_out" (GPT-2's Conv1D)}]}],
//    "centre_writers": [{"weight": "<W>", "bias": "<b>" (optional), "axis": "rows" | "columns"}]}
// Unknown keys are errors (a typo must not silently fold less).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "fold.h"

namespace normcheck::fold {

struct ConsumerSpec {
  std::string weight, bias, new_bias;  // empty: none
  bool in_out = false;                 // stored [in, out] (Conv1D) instead of [out, in]
};

struct NormSpec {
  std::string name;
  NormKind kind = NormKind::layer;
  Placement placement = Placement::pre_ln;
  std::string weight, bias;
  std::vector<ConsumerSpec> consumers;
};

struct WriterSpec {
  std::string weight, bias;
  Axis axis = Axis::rows;
};

struct FoldSpec {
  std::vector<NormSpec> norms;
  std::vector<WriterSpec> writers;
};

// Throws FoldError with the reason (where in the spec, what was expected).
FoldSpec parse_fold_spec(std::string_view json_text, const std::string& what);

}  // namespace normcheck::fold
