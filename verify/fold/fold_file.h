// A spec applied to a safetensors file: every named norm's gamma/beta folded
// into its consumers (the norm's own tensors become gamma = 1, beta = 0, so
// the file still loads into the same architecture), every named writer
// centred, and each fold verified against its derived bound on random and
// adversarial normalized rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fold_check.h"
#include "safetensors.h"
#include "spec.h"

namespace normcheck::fold {

struct ConsumerReport {
  std::string norm, weight, dtype;
  long d = 0, e = 0;
  FoldCheck check;
};

struct WriterReport {
  std::string weight, dtype;
  // max over centred columns (rows for an embedding) of check_centring's
  // ratios (fold_check.h): the column's sum and each entry against their bounds.
  double sum_over_bound = 0, entry_over_bound = 0;
  long overflowed = 0;
};

struct FoldReport {
  std::vector<ConsumerReport> consumers;
  std::vector<WriterReport> writers;
  bool ok() const;
};

struct FoldOptions {
  uint64_t seed = 0;
  long rows = 16;           // normalized rows per consumer (families cycle, families.h)
  bool wrong_side = false;  // negative control: fold diag(gamma) W instead
  bool storage_activations = false;  // check with the norm's output rounded to the weights' dtype
};

// Rewrites `file` in place. Throws FoldError for a spec the file does not
// fit (a name it lacks, a shape or dtype that does not match, a Post-LN norm).
FoldReport fold_file(TensorFile& file, const FoldSpec& spec, const FoldOptions& options);

}  // namespace normcheck::fold
