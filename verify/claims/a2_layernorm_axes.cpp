// A2 (seed 002): the seed describes LayerNorm as averaging each batch item over
// (S, D) (its "LN1 = (w11 + ... + w34)/12"), which is LayerNorm([S, D]), while
// nn.LayerNorm(D) -- what its code and every Transformer uses -- averages each
// token over D. Shows they differ, with BatchNorm's axes in the same picture.
#include "claim_sources.h"
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "claim_format.h"
#include "monte_carlo.h"
#include "semantics.h"

namespace normcheck::claims {

using claims_text::fmt;

ClaimResult check_a2(const ClaimOptions&, const ExactTensor& x) {
  const double eps = kTorchEps;
  const auto& shape = x.shape();
  const ExactTensor ln_d = layer_norm(x, 1, eps);       // per (b, s) over D
  const ExactTensor ln_sd = layer_norm(x, 2, eps);      // per b over (S, D): the seed's description
  const ExactTensor bn_feature = x.normalized({0, 1}, eps);  // BatchNorm per feature d over (B, S)
  const ExactTensor bn_seed = batch_norm(x, eps);       // BatchNorm1d fed (B, S, D): per s over (B, D), the seed's BN1..BN3
  const double diff = ln_sd.max_abs_difference(ln_d);
  const double tolerance = kExactTolerance * ln_d.max_abs();

  ClaimResult result;
  const std::string name = "(" + std::to_string(shape[0]) + "," + std::to_string(shape[1]) + "," + std::to_string(shape[2]) + ")";
  if (diff <= tolerance) {
    result.verdict = Verdict::holds;
    result.figure = "max |LayerNorm([S,D]) - LayerNorm(D)| = " + fmt("%.1e", diff) + " on " + name + " (S = 1: the same op)";
  } else {
    const int64_t at = ln_sd.argmax_abs_difference(ln_d);
    result.verdict = Verdict::refuted;
    result.figure = "max |LayerNorm([S,D]) - LayerNorm(D)| = " + fmt("%.3f", diff) + " on " + name + " (element " +
                    std::to_string(at) + ": " + fmt("%.4f", ln_sd.to_double()[at]) + " vs " + fmt("%.4f", ln_d.to_double()[at]) + ")";
  }
  result.explanation =
      "On a " + name + " tensor at 332 bits: LayerNorm(D) normalizes each (b,s) over D (B*S means); the seed's "
      "description (average of all S*D values per batch item, B means) is LayerNorm([S,D]); they differ by up to " +
      fmt("%.3f", diff) + ". BatchNorm in the same picture: per feature d over (B,S) (D means) differs from LayerNorm(D) by up to " +
      fmt("%.3f", bn_feature.max_abs_difference(ln_d)) + "; the seed's BN1..BN3 (per position s over (B,D)) is what "
      "BatchNorm1d(S) computes when fed a (B,S,D) tensor unpermuted, and differs from LayerNorm(D) by up to " +
      fmt("%.3f", bn_seed.max_abs_difference(ln_d)) + ". The seed's own printouts agree: its LayerNorm([3,4]) block differs "
      "from its LayerNorm(4) block by up to " + fmt("%.4f", [] {
        const auto& p = seed002_prints();
        double m = 0;
        for (int i = 0; i < 24; ++i) m = std::max(m, std::abs(p.layernorm_sd[i] - p.manual[i]));
        return m;
      }()) + " (printed numbers), though its text calls that block batch_norm. For a user: nn.LayerNorm(d_model) "
      "normalizes every token on its own; LayerNorm([S,D]) would couple tokens (and leak information across positions "
      "in a causal model).";
  auto series_of = [&](const std::string& label, const ExactTensor& t) {
    Series s{.name = label, .x_label = "element (row-major b, s, d)", .y_label = "normalized value", .x = {}, .y = {}};
    s.y = t.to_double();
    s.x.resize(s.y.size());
    std::iota(s.x.begin(), s.x.end(), 0.0);
    return s;
  };
  result.series = {series_of("LayerNorm(D)", ln_d), series_of("LayerNorm([S,D]) (seed's description)", ln_sd),
                   series_of("BatchNorm per d over (B,S)", bn_feature), series_of("BatchNorm1d(S) on (B,S,D): per s over (B,D)", bn_seed)};
  return result;
}

constinit const Claim kClaimA2{
    .id = "A2",
    .title = "Seed 002's description of LayerNorm (mean over (S,D) per batch item) is LayerNorm([S,D]), not LayerNorm(D)",
    .source = NORMCHECK_SOURCE_ADD_NORM,
    .check = [](const ClaimOptions& options) {
      auto rng = claims_mc::seeded_rng(options.seed, /*stream=*/0x4132);
      std::normal_distribution<double> normal;
      std::vector<float> v(2 * 3 * 4);  // the seed's shape (batch 2, sequence 3, dim 4)
      for (float& e : v) e = static_cast<float>(normal(rng));
      return check_a2(options, ExactTensor({2, 3, 4}, std::span<const float>(v)));
    },
};

}  // namespace normcheck::claims
