// Which formula does a LayerNorm kernel compute? Measured, not assumed: run the
// kernel on rows where the candidate formulas differ by far more than float
// error, and see which exact candidate its output is closest to (S2, S3), or
// which float evaluation order it reproduces bit for bit (S4).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exact_tensor.h"
#include "normcheck/kernel.h"

namespace normcheck::claims {

struct FwdRun {
  std::string kernel;
  std::string declined;  // non-empty: the kernel declined the shape, nothing ran
  std::vector<float> y, mean, rstd;
};

// Runs every float32 LayerNorm-forward kernel of `kernels` on x (rows x cols),
// without gamma and beta. Kernels of other ops are ignored; 16-bit kernels are
// listed in `skipped` (their input rounding would blur the comparison).
std::vector<FwdRun> run_layernorm_fwd_kernels(std::span<const Kernel> kernels, std::span<const float> x,
                                              int64_t rows, int64_t cols, float eps,
                                              std::vector<std::string>* skipped = nullptr);

// ||y - c||_2 / ||c||_2 over all elements.
double normwise_distance(std::span<const float> y, std::span<const double> c);

struct FormMatch {
  std::string kernel;
  int closest = -1, runner_up = -1;  // indices into FormSurvey::forms
  double distance = 0, runner_up_distance = 0;
};

struct FormSurvey {
  std::string rows;            // what the test rows were
  std::vector<NormForm> forms; // the candidates: spread x correction
  std::vector<FormMatch> matches;
  std::vector<std::string> skipped, declined;
};

// The four candidates {sqrt(var+eps), std+eps} x {biased, unbiased} on rows of
// d = 8 with sigma = 2^-12 .. 1 (eps = 1e-5): the spreads differ by up to a
// factor 3.4 and the corrections by sqrt(8/7) - 1 = 6.9%, against float errors
// of ~1e-7 relative. Random rows from `seed`.
FormSurvey survey_layernorm_forms(std::span<const Kernel> kernels, uint64_t seed);

// "kernel: form (distance d, next n)" lines for explanations.
std::string describe(const FormSurvey& survey);

}  // namespace normcheck::claims
