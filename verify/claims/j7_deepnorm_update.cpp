// J7 (seed 003; DeepNet arXiv 2203.00555 Section 4): with DeepNorm the model
// update ||F(x, theta - eta g) - F(x, theta)|| stays O(eta) as the depth N
// grows, while Post-LN's grows with N. Measured on real multi-head attention +
// ReLU FFN stacks (transformer.h, model_update.h), encoder and decoder-only
// (causal), plus every row of the alpha/beta table against its condition.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>

#include "claim_format.h"
#include "deepnorm_table.h"
#include "model_update.h"
#include "monte_carlo.h"
#include "normcheck/claims.h"

namespace normcheck {
namespace {

using claims_deepnorm::UpdateMeasurement;
using claims_text::fmt;

struct Config {
  const char* name;
  bool deepnorm;
  bool causal;
};
constexpr Config kConfigs[] = {
    {"encoder Post-LN", false, false},
    {"encoder DeepNorm", true, false},
    {"decoder-only Post-LN", false, true},
    {"decoder-only DeepNorm", true, true},
};
constexpr int kSeeds = 3;

std::vector<int> depths(bool full) {
  std::vector<int> out;
  for (int n = 1; n <= (full ? 512 : 64); n *= 2) out.push_back(n);
  if (full) out.push_back(1000);
  return out;
}

struct Job {
  int config, depth_index, replicate;
  UpdateMeasurement result;
};

// Runs every (config, depth, seed) on two threads (the machine has 2 cores);
// each job's seed depends only on its own indices, so the result does not
// depend on scheduling.
void run_jobs(std::vector<Job>& jobs, const std::vector<int>& ns, uint64_t seed) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      Job& job = jobs[j];
      const Config& c = kConfigs[job.config];
      transformer::Shape shape;
      shape.layers = ns[job.depth_index];
      shape.causal = c.causal;
      const transformer::Residual residual =
          c.deepnorm ? transformer::deepnorm_encoder(shape.layers) : transformer::Residual{1, 1};
      claims_deepnorm::UpdateOptions options;
      options.finite_step = options.adam_step = options.per_sublayer = !c.causal;
      // Same seed for Post-LN and DeepNorm at one (depth, replicate): same x, R and
      // the same Gaussian draws behind the weights (scaled by a different gain).
      job.result = claims_deepnorm::measure_update(
          shape, residual, seed + 1000003ULL * job.depth_index + job.replicate + (c.causal ? 7919 : 0),
          options);
    }
  };
  std::thread helper(worker);
  worker();
  helper.join();
}

double mean_of(const std::vector<Job>& jobs, int config, int depth_index,
               double (*field)(const UpdateMeasurement&)) {
  std::vector<double> values;
  for (const Job& j : jobs)
    if (j.config == config && j.depth_index == depth_index) values.push_back(field(j.result));
  return claims_mc::mean_interval(values).mean;
}

double log_product(const std::vector<double>& factors) {
  double sum = 0;
  for (double f : factors) sum += std::log(f);
  return sum;
}


}  // namespace

ClaimResult check_j7_deepnorm_update(const ClaimOptions& options) {
  const std::vector<int> ns = depths(options.full);
  std::vector<Job> jobs;
  for (int c = 0; c < 4; ++c)
    for (int d = static_cast<int>(ns.size()) - 1; d >= 0; --d)  // big first: better balance
      for (int r = 0; r < kSeeds; ++r) jobs.push_back({c, d, r, {}});
  run_jobs(jobs, ns, options.seed);

  ClaimResult result;
  const int last = static_cast<int>(ns.size()) - 1;
  auto sgd = [](const UpdateMeasurement& m) { return m.sgd_per_eta; };
  auto finite = [](const UpdateMeasurement& m) { return m.sgd_finite_per_eta; };
  auto adam = [](const UpdateMeasurement& m) { return m.adam_per_eta; };
  auto rhs = [](const UpdateMeasurement& m) { return m.theorem_rhs_per_eta; };
  auto amplification = [](const UpdateMeasurement& m) {
    return std::exp(log_product(m.input_amplification));
  };

  auto add = [&](const std::string& name, int config, double (*field)(const UpdateMeasurement&),
                 const std::string& y_label) {
    Series s{name, "layers N", y_label, true, true, {}, {}};
    for (int d = 0; d <= last; ++d) {
      s.x.push_back(ns[d]);
      s.y.push_back(mean_of(jobs, config, d, field));
    }
    result.series.push_back(std::move(s));
    return result.series.back();
  };
  const std::string per_eta = "||dF||_F / eta (mean of 3 seeds)";
  const Series post = add("encoder Post-LN, SGD", 0, sgd, per_eta);
  const Series deep = add("encoder DeepNorm, SGD", 1, sgd, per_eta);
  const Series post_dec = add("decoder-only Post-LN, SGD", 2, sgd, per_eta);
  const Series deep_dec = add("decoder-only DeepNorm, SGD", 3, sgd, per_eta);
  add("encoder Post-LN, SGD eta = 1e-3", 0, finite, per_eta);
  const Series deep_finite = add("encoder DeepNorm, SGD eta = 1e-3", 1, finite, per_eta);
  const Series deep_rhs = add("encoder DeepNorm, Theorem 4.2 right-hand side", 1, rhs, "/ eta");
  add("encoder Post-LN, Theorem 4.2 right-hand side", 0, rhs, "/ eta");
  const Series post_adam = add("encoder Post-LN, Adam first step", 0, adam, per_eta);
  const Series deep_adam = add("encoder DeepNorm, Adam first step", 1, adam, per_eta);
  const Series deep_amp = add("encoder DeepNorm, product of measured sublayer input gains", 1,
                              amplification, "gain over sublayers 2..2N");
  const Series post_amp = add("encoder Post-LN, product of measured sublayer input gains", 0,
                              amplification, "gain over sublayers 2..2N");
  Series kept{"encoder DeepNorm, kept factor ((alpha+beta^2)/sqrt(alpha^2+beta^4))^(2N-1)",
              "layers N", "predicted gain", true, true, {}, {}};
  for (int n : ns) {
    const transformer::Residual r = transformer::deepnorm_encoder(n);
    const double f = (r.alpha + r.beta * r.beta) / std::hypot(r.alpha, r.beta * r.beta);
    kept.x.push_back(n);
    kept.y.push_back(std::pow(f, 2 * n - 1));
  }
  result.series.push_back(kept);

  // The alpha/beta table: each row's condition over a grid of depths.
  double single_stack_error = 0, encdec_low = 1e300, encdec_high = 0, exact_encdec_error = 0;
  Series table{"enc-dec encoder condition with the printed 0.81, 0.87 (N = M)", "layers N",
               "condition (1 = as derived)", true, false, {}, {}};
  for (int n = 1; n <= 1024; n *= 2) {
    for (int m = 1; m <= 1024; m *= 2) {
      for (const auto& row : {claims_deepnorm::encoder_only_row(n), claims_deepnorm::decoder_only_row(m),
                              claims_deepnorm::encdec_decoder_row(m)})
        single_stack_error = std::max(single_stack_error, std::abs(row.condition - 1));
      const double c = claims_deepnorm::encdec_encoder_row(n, m).condition;
      encdec_low = std::min(encdec_low, c);
      encdec_high = std::max(encdec_high, c);
      exact_encdec_error = std::max(
          exact_encdec_error,
          std::abs(claims_deepnorm::encdec_encoder_row(n, m, claims_deepnorm::exact_encoder_a(),
                                                       claims_deepnorm::exact_encoder_b()).condition - 1));
      if (n == m) {
        table.x.push_back(n);
        table.y.push_back(c);
      }
    }
  }
  result.series.push_back(table);

  auto range = [](const Series& s) {
    const auto [lo, hi] = std::minmax_element(s.y.begin(), s.y.end());
    return std::pair{*lo, *hi};
  };
  const auto [deep_lo, deep_hi] = range(deep);
  const auto [dec_lo, dec_hi] = range(deep_dec);
  const double post_growth = post.y[last] / post.y[0];
  const double post_dec_growth = post_dec.y[last] / post_dec.y[0];
  const double post_peak = range(post).second;
  const double thm_ratio = deep.y[last] / deep_rhs.y[last];
  // Decision, fixed before measuring: "stays O(eta)" = DeepNorm's ||dF||/eta varies by
  // at most 2x over the whole sweep (N spans 64x or 1000x); "Post-LN grows" = its value
  // at the largest N is at least 10x the N = 1 value.
  const bool deep_bounded = claims_deepnorm::stays_bounded(deep.y, 2) &&
                            claims_deepnorm::stays_bounded(deep_dec.y, 2);
  const bool post_grows = post_growth >= 10 && post_dec_growth >= 10;
  result.verdict = deep_bounded && post_grows ? Verdict::holds_approximately : Verdict::refuted;
  result.figure = fmt(
      "N=1..%d, SGD ||dF||/eta: DeepNorm %.3g..%.3g (enc), %.3g..%.3g (dec-only); Post-LN %.3g -> %.3g "
      "(x%.0f enc, peak %.3g), x%.0f dec-only; Thm 4.2 RHS low by x%.1f; table: single-stack rows exact "
      "(|c-1| <= %.0e), enc-dec encoder c = %.4f..%.4f",
      ns[last], deep_lo, deep_hi, dec_lo, dec_hi, post.y[0], post.y[last], post_growth, post_peak,
      post_dec_growth, thm_ratio, single_stack_error, encdec_low, encdec_high);
  result.explanation = fmt(
      "Stack: d = 64, 4 heads, FFN 256, 16 tokens, LN eps 1e-5 without affine, no biases, "
      "float64; xavier-normal gains beta (W^V, W^O, W1, W2) and 1 (W^Q, W^K). Loss L = <R, F> with "
      "||R||_F = 1 (so ||dL/dF|| = 1); one SGD step at eta = 1e-6 (first order) and 1e-3; %d seeds "
      "from seed %llu. DeepNorm's update per unit eta stays in [%.3g, %.3g] from N = 1 to %d "
      "(eta = 1e-3: %.3g at N = %d), Post-LN's goes from %.3g to %.3g, irregularly across seeds: "
      "at N = %d one step of eta = 1e-6 already moves F by %.2g (||F||_F = 32), past the first-order "
      "regime. ",
      kSeeds, static_cast<unsigned long long>(options.seed), deep_lo, deep_hi, ns[last],
      deep_finite.y[last], ns[last], post.y[0], post.y[last], ns[last],
      post.y[last] * claims_deepnorm::kFirstOrderEta);
  result.explanation += fmt(
      "Theorem 4.2's right-hand side sum sqrt(v^2+w^2)/alpha ||dtheta_i|| is %.3g/eta at N = %d, "
      "x%.1f below the measured update: as an inequality it fails; its N-scaling is right. "
      "Adam's first step (sign(g)) is not O(eta) for DeepNorm either: %.3g -> %.3g (N = 1 -> %d, "
      "~sqrt(N), as ||dtheta|| = eta sqrt(#params)); Post-LN %.3g -> %.3g. ",
      deep_rhs.y[last], ns[last], thm_ratio, deep_adam.y[0], deep_adam.y[last], ns[last],
      post_adam.y[0], post_adam.y[last]);
  result.explanation += fmt(
      "The factor (alpha + v w)/sqrt(alpha^2 + v^2 w^2) >= 1 that the derivation replaces by 1: kept, it "
      "predicts a gain of %.3g over the DeepNorm stack at N = %d; the measured product of sublayer "
      "input gains along the update is %.4g (Post-LN: %.3g), so replacing it by 1 matches practice. "
      "Table: encoder-only, decoder-only and the enc-dec decoder rows satisfy S * 2 beta^2/alpha^2 = 1 "
      "exactly (to %.0e); the enc-dec encoder row gives %.4f (Theorem 4.3's condition, N, M = 1..1024), "
      "off by the rounding of its constants: the exact ones are a = %.4f, b = %.4f (condition 1 to %.0e).",
      kept.y[last], ns[last], deep_amp.y[last], post_amp.y[last], single_stack_error, encdec_high,
      claims_deepnorm::exact_encoder_a(), claims_deepnorm::exact_encoder_b(), exact_encdec_error);
  return result;
}

}  // namespace normcheck
