// S1 (seed 001): nn.LayerNorm(normalized_shape = [C, H, W]) on (N, C, H, W)
// equals flattening to (N, C*H*W) and normalizing each row; permuting to
// (N, H, W, C), LayerNorm(C), and permuting back equals normalizing each pixel
// over its C channels. Both sides at 332 bits, data really reshaped/permuted.
#include "claim_sources.h"
#include <algorithm>
#include <cmath>
#include <random>

#include "claim_format.h"
#include "kernel_forms.h"
#include "monte_carlo.h"
#include "semantics.h"

namespace normcheck::claims {

using claims_text::fmt;

namespace {

struct Example {
  std::string name;
  ExactTensor x;  // (N, C, H, W)
};

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());  // exact: the values are floats
}

// Seed 001's printed LayerNorm([3, 4, 4]) output of arange(1, 49), row-major.
constexpr double kSeed001Printed[48] = {
    -1.6963, -1.6242, -1.5520, -1.4798, -1.4076, -1.3354, -1.2632, -1.1910, -1.1189, -1.0467, -0.9745, -0.9023,
    -0.8301, -0.7579, -0.6858, -0.6136, -0.5414, -0.4692, -0.3970, -0.3248, -0.2526, -0.1805, -0.1083, -0.0361,
    0.0361,  0.1083,  0.1805,  0.2526,  0.3248,  0.3970,  0.4692,  0.5414,  0.6136,  0.6858,  0.7579,  0.8301,
    0.9023,  0.9745,  1.0467,  1.1189,  1.1910,  1.2632,  1.3354,  1.4076,  1.4798,  1.5520,  1.6241,  1.6963};

}  // namespace

ClaimResult check_s1(const ClaimOptions& options, const NormOp& layer_norm_op, std::span<const Kernel> kernels) {
  const double eps = kTorchEps;
  std::vector<Example> examples;
  const auto arange = seed001_arange48();
  examples.push_back({"seed 001 arange(1,49).view(1,3,4,4)", ExactTensor({1, 3, 4, 4}, std::span<const double>(arange))});
  auto rng = claims_mc::seeded_rng(options.seed, /*stream=*/0x5331);
  std::normal_distribution<double> normal;
  std::vector<float> random(2 * 3 * 5 * 5);
  for (float& v : random) v = static_cast<float>(3.0 + 2.0 * normal(rng));
  examples.push_back({"N(3, 2^2) floats, shape (2,3,5,5)", ExactTensor({2, 3, 5, 5}, std::span<const float>(random))});

  ClaimResult result;
  double worst_relative = 0;
  std::string counterexample, kernel_text;
  for (const Example& e : examples) {
    const auto& s = e.x.shape();
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
    // [C, H, W] vs flatten
    const ExactTensor library = layer_norm_op(e.x, 3, eps);
    const ExactTensor flatten = e.x.reshaped({n, c * h * w}).normalized({1}, eps).reshaped(s);
    // permute + LayerNorm(C) + permute back vs each pixel over its channels
    const ExactTensor permuted = layer_norm_op(e.x.permuted({0, 2, 3, 1}), 1, eps).permuted({0, 3, 1, 2});
    const ExactTensor per_pixel = e.x.normalized({1}, eps);
    const double scale = std::max(flatten.max_abs(), per_pixel.max_abs());
    const double d_flat = library.max_abs_difference(flatten) / scale;
    const double d_pixel = permuted.max_abs_difference(per_pixel) / scale;
    worst_relative = std::max({worst_relative, d_flat, d_pixel});
    result.explanation += e.name + ": max |LN([C,H,W]) - flatten| = " + fmt("%.1e", d_flat) +
                          ", max |permute+LN(C)+permute - per-pixel| = " + fmt("%.1e", d_pixel) + " (relative). ";
    if (counterexample.empty() && std::max(d_flat, d_pixel) > kExactTolerance) {
      const bool flat_fails = d_flat > kExactTolerance;
      const ExactTensor& a = flat_fails ? library : permuted;
      const ExactTensor& b = flat_fails ? flatten : per_pixel;
      const int64_t at = a.argmax_abs_difference(b);
      counterexample = e.name + ", element " + std::to_string(at) + ": " + (flat_fails ? "LN([C,H,W])" : "permute+LN(C)") +
                       " gives " + fmt("%.6f", a.to_double()[at]) + ", " + (flat_fails ? "flatten" : "per-pixel") +
                       " gives " + fmt("%.6f", b.to_double()[at]);
    }
    // Our float kernels on both layouts: rows of C*H*W, and rows of C (the permuted tensor).
    const auto flat_x = to_float(e.x.to_double());
    const auto pixel_x = to_float(e.x.permuted({0, 2, 3, 1}).to_double());
    const auto flat_exact = flatten.to_double();
    const auto pixel_exact = per_pixel.permuted({0, 2, 3, 1}).to_double();
    const auto flat_runs = run_layernorm_fwd_kernels(kernels, flat_x, n, c * h * w, static_cast<float>(eps));
    const auto pixel_runs = run_layernorm_fwd_kernels(kernels, pixel_x, n * h * w, c, static_cast<float>(eps));
    for (std::size_t k = 0; k < flat_runs.size(); ++k) {
      if (!flat_runs[k].declined.empty() || !pixel_runs[k].declined.empty()) continue;
      double err = 0;
      for (std::size_t i = 0; i < flat_exact.size(); ++i) {
        err = std::max(err, std::abs(flat_runs[k].y[i] - flat_exact[i]));
        err = std::max(err, std::abs(pixel_runs[k].y[i] - pixel_exact[i]));
      }
      kernel_text += flat_runs[k].kernel + " on " + e.name + ": max |y - exact| = " + fmt("%.1e", err) + "; ";
    }
    if (&e == &examples.front()) {
      double printed = 0;
      for (int i = 0; i < 48; ++i) printed = std::max(printed, std::abs(flatten.to_double()[i] - kSeed001Printed[i]));
      result.explanation += "The seed's printed LayerNorm([3,4,4]) output is the exact result rounded to 4 decimals "
                            "(max |exact - printed| = " + fmt("%.2e", printed) + ", rounding allows 5e-5 plus float error). ";
      Series series{.name = "LayerNorm([3,4,4]) of arange(1,49), exact", .x_label = "input value x",
                    .y_label = "output y", .x = {}, .y = {}};
      series.x = arange;
      series.y = flatten.to_double();
      result.series.push_back(std::move(series));
    }
  }
  if (!kernel_text.empty()) result.explanation += "Float kernels, same data: " + kernel_text;
  decide_equivalence(result, counterexample,
                     "max relative difference " + fmt("%.1e", worst_relative) + " over both equivalences (exact: < " +
                         fmt("%.0e", kExactTolerance) + ", 332-bit arithmetic)");
  result.explanation = "Computed both sides at 332 bits with real reshapes and permutes. " + result.explanation +
                       "For a user: LayerNorm over [C,H,W] is one normalization per sample over all C*H*W values, "
                       "and LayerNorm(C) after a channels-last permute is a per-pixel normalization over channels; "
                       "both equivalences are exact, so either layout can be used.";
  return result;
}

constinit const Claim kClaimS1{
    .id = "S1",
    .title = "normalized_shape [C,H,W] equals flatten-then-normalize; permute + LayerNorm(C) equals per-pixel normalization",
    .source = NORMCHECK_SOURCE_LN_IMPLEMENTATION,
    .check = [](const ClaimOptions& options) { return check_s1(options, layer_norm, kernel_table()); },
};

}  // namespace normcheck::claims
