#include "kernel_forms.h"

#include <cmath>
#include <random>

#include "monte_carlo.h"
#include "normcheck/invoke.h"
#include "claim_format.h"

namespace normcheck::claims {

std::vector<FwdRun> run_layernorm_fwd_kernels(std::span<const Kernel> kernels, std::span<const float> x,
                                              int64_t rows, int64_t cols, float eps,
                                              std::vector<std::string>* skipped) {
  std::vector<FwdRun> runs;
  for (const Kernel& kernel : kernels) {
    // A row with a spec of its own (Kernel::spec: a residual added in front,
    // 1 + gamma) computes another function of x: no form of this op.
    if (kernel.op != Op::layernorm_fwd || kernel.spec) continue;
    if (kernel.dtype != DType::f32) {
      if (skipped) skipped->push_back(std::string(kernel.name) + " (" + std::string(to_string(kernel.dtype)) + ")");
      continue;
    }
    FwdRun run;
    run.kernel = kernel.name;
    run.declined = declines(kernel, {Shape{.rows = rows, .cols = cols}});
    if (run.declined.empty()) {
      run.y.assign(x.size(), 0.0f);
      run.mean.assign(rows, 0.0f);
      run.rstd.assign(rows, 0.0f);
      invoke(kernel, {.rows = rows, .cols = cols, .eps = eps, .x = x.data(), .out = run.y.data(),
                      .mean = run.mean.data(), .stat = run.rstd.data()});
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

double normwise_distance(std::span<const float> y, std::span<const double> c) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double d = static_cast<double>(y[i]) - c[i];
    diff += d * d;
    norm += c[i] * c[i];
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

FormSurvey survey_layernorm_forms(std::span<const Kernel> kernels, uint64_t seed) {
  constexpr int64_t kCols = 8, kRowsPerSigma = 3;
  constexpr float kEps = 1e-5f;
  const double sigmas[] = {0x1p-12, 0x1p-10, 0x1p-8, 1.0};
  auto rng = claims_mc::seeded_rng(seed, /*stream=*/0x5253);  // "S2/S3"
  std::normal_distribution<double> normal;
  std::vector<float> x;
  for (double sigma : sigmas)
    for (int64_t i = 0; i < kRowsPerSigma * kCols; ++i) x.push_back(static_cast<float>(sigma * normal(rng)));
  const int64_t rows = static_cast<int64_t>(x.size()) / kCols;

  FormSurvey survey;
  survey.rows = std::to_string(rows) + " rows of d = 8, x = sigma z with z ~ N(0,1), sigma in {2^-12, 2^-10, 2^-8, 1}, eps = 1e-5f, seed " +
                std::to_string(seed);
  for (Spread spread : {Spread::sqrt_var_plus_eps, Spread::std_plus_eps})
    for (int correction : {0, 1}) survey.forms.push_back({spread, correction});

  const ExactTensor exact_x({rows, kCols}, std::span<const float>(x));
  std::vector<std::vector<double>> candidates;
  for (const NormForm& form : survey.forms)
    candidates.push_back(exact_x.normalized({1}, static_cast<double>(kEps), form).to_double());

  for (const FwdRun& run : run_layernorm_fwd_kernels(kernels, x, rows, kCols, kEps, &survey.skipped)) {
    if (!run.declined.empty()) {
      survey.declined.push_back(run.kernel + ": " + run.declined);
      continue;
    }
    FormMatch match{.kernel = run.kernel};
    std::vector<double> distance;
    for (const auto& c : candidates) distance.push_back(normwise_distance(run.y, c));
    for (int i = 0; i < static_cast<int>(distance.size()); ++i) {
      if (match.closest < 0 || distance[i] < distance[match.closest]) {
        match.runner_up = match.closest;
        match.closest = i;
      } else if (match.runner_up < 0 || distance[i] < distance[match.runner_up]) {
        match.runner_up = i;
      }
    }
    match.distance = distance[match.closest];
    match.runner_up_distance = distance[match.runner_up];
    survey.matches.push_back(match);
  }
  return survey;
}

std::string describe(const FormSurvey& survey) {
  std::string text;
  for (const FormMatch& m : survey.matches)
    text += m.kernel + ": " + describe(survey.forms[m.closest]) + " (normwise distance " + claims_text::fmt("%.2e", m.distance) +
            "; next closest " + describe(survey.forms[m.runner_up]) + " at " + claims_text::fmt("%.2e", m.runner_up_distance) + "). ";
  for (const std::string& s : survey.skipped) text += s + ": not measured (16-bit storage). ";
  for (const std::string& s : survey.declined) text += "declined: " + s + ". ";
  return text;
}

}  // namespace normcheck::claims
