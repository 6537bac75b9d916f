// A1 (seed 002): LayerNorm(D) on (B, S, D) equals InstanceNorm applied with S
// as the channel axis (the seed reshapes to (B, S, D, 1) for InstanceNorm2d).
// Also measured: the same conclusion does not carry over to image tensors,
// where LayerNorm([C, H, W]) and InstanceNorm2d reduce over different axes.
#include "claim_sources.h"
#include <algorithm>
#include <random>

#include "claim_format.h"
#include "monte_carlo.h"
#include "semantics.h"

namespace normcheck::claims {

using claims_text::fmt;

ClaimResult check_a1(const ClaimOptions& options, const NormOp& instance_norm_op) {
  const double eps = kTorchEps;
  auto rng = claims_mc::seeded_rng(options.seed, /*stream=*/0x4131);
  std::normal_distribution<double> normal;
  auto random_tensor = [&](std::vector<int64_t> shape) {
    std::vector<float> v(shape[0] * shape[1] * shape[2] * (shape.size() > 3 ? shape[3] : 1));
    for (float& e : v) e = static_cast<float>(normal(rng));
    return ExactTensor(std::move(shape), std::span<const float>(v));
  };

  ClaimResult result;
  double worst = 0;
  std::string counterexample;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{4, 16, 32}}) {
    const ExactTensor x = random_tensor(shape);
    const ExactTensor ln = layer_norm(x, 1, eps);
    const ExactTensor in = instance_norm_op(x.reshaped({shape[0], shape[1], shape[2], 1}), 0, eps).reshaped(shape);
    const double diff = ln.max_abs_difference(in) / ln.max_abs();
    worst = std::max(worst, diff);
    const std::string name = "(" + std::to_string(shape[0]) + "," + std::to_string(shape[1]) + "," + std::to_string(shape[2]) + ")";
    result.explanation += "N(0,1) floats " + name + ": max |LayerNorm(D) - InstanceNorm2d on (B,S,D,1)| = " +
                          fmt("%.1e", diff) + " (relative). ";
    if (counterexample.empty() && diff > kExactTolerance) {
      const int64_t at = ln.argmax_abs_difference(in);
      counterexample = name + " element " + std::to_string(at) + ": LayerNorm(D) " + fmt("%.6f", ln.to_double()[at]) +
                       ", InstanceNorm " + fmt("%.6f", in.to_double()[at]);
    }
  }
  // The limit of the seed's conclusion: on (N, C, H, W) images the two ops differ.
  const ExactTensor image = random_tensor({2, 3, 4, 4});
  const double image_diff = layer_norm(image, 3, eps).max_abs_difference(instance_norm(image, eps));
  result.explanation += "On an image tensor (2,3,4,4) LayerNorm([C,H,W]) and InstanceNorm2d(C) differ by up to " +
                        fmt("%.2f", image_diff) +
                        ": the identity is a statement about this layout (the normalized axis D is InstanceNorm's "
                        "spatial axis), not 'LayerNorm is InstanceNorm' in general. Note also that the seed's own "
                        "demonstration computes instance_norm(...) into `output` and then prints layer_norm(embedding) "
                        "again, so its printout never showed InstanceNorm's result; the check above does. ";
  decide_equivalence(result, counterexample,
                     "max relative difference " + fmt("%.1e", worst) + " (exact: < " + fmt("%.0e", kExactTolerance) +
                         "); on (N,C,H,W) images the ops differ by " + fmt("%.2f", image_diff));
  result.explanation = "Both sides at 332 bits. " + result.explanation +
                       "For a user: in a Transformer (B,S,D) activation, LayerNorm normalizes each token's D features; "
                       "it never mixes tokens or batch items, which is why it behaves the same in training and inference "
                       "and for any batch size.";
  return result;
}

constinit const Claim kClaimA1{
    .id = "A1",
    .title = "LayerNorm(D) on (B,S,D) equals InstanceNorm with S as the channel axis",
    .source = NORMCHECK_SOURCE_ADD_NORM,
    .check = [](const ClaimOptions& options) {
      return check_a1(options, [](const ExactTensor& x, int, double eps) { return instance_norm(x, eps); });
    },
};

}  // namespace normcheck::claims
