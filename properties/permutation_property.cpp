// permutation_equivariance: permuting the columns of x (with gamma, beta, dy)
// permutes the output the same way; mean, sigma and the rms are symmetric
// functions of the row. Exact in real arithmetic, while a kernel sums in a
// different order: tolerance is the sum of the bound allowances on both
// inputs (invariants.h).
#include <algorithm>
#include <numeric>

#include <rapidcheck.h>

#include "generators.h"
#include "invariants.h"
#include "judged.h"
#include "property_table.h"

namespace normcheck::props {
namespace {

void permutation_equivariance(const Kernel& kernel, const Problem& p) {
  std::vector<size_t> columns(static_cast<size_t>(p.cols));
  std::iota(columns.begin(), columns.end(), size_t{0});
  Rng rng(*rc::gen::arbitrary<uint64_t>());
  std::shuffle(columns.begin(), columns.end(), rng);

  // Element i = r * cols + j of the permuted problem is p's r * cols + columns[j].
  std::vector<size_t> order(static_cast<size_t>(p.rows * p.cols));
  for (size_t r = 0; r < static_cast<size_t>(p.rows); ++r)
    for (size_t j = 0; j < columns.size(); ++j) order[r * columns.size() + j] = r * columns.size() + columns[j];
  const auto permute = [&](const std::vector<float>& v, bool per_row) {
    if (v.empty()) return v;
    std::vector<float> out(per_row ? order.size() : columns.size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = v[per_row ? order[i] : columns[i]];
    return out;
  };
  Problem permuted = p;
  permuted.x = permute(p.x, true);
  permuted.dy = permute(p.dy, true);
  permuted.gamma = permute(p.gamma, false);
  permuted.beta = permute(p.beta, false);
  const Evaluation original = judged(kernel, p);
  require_invariant(kernel, "K(P x) vs P K(x)", original, permuted, permute(main_values(original), true), order);
}

}  // namespace

constinit const PropertyDef kPermutationEquivariance = {
    "permutation_equivariance", invariant_applies, finite_options_for, permutation_equivariance};

}  // namespace normcheck::props
