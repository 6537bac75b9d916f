// The semantic claims of seeds 001, 002 and 004 (S1-S5, A1-A3): the exact ops
// they reason about, and each check with the pieces the tests feed deliberately
// wrong inputs to (negative controls). Boost-free; see exact_tensor.h.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "exact_tensor.h"
#include "normcheck/claims.h"
#include "normcheck/kernel.h"

namespace normcheck::claims {

// ---- The ops, as PyTorch documents them, at full precision ----
// nn.LayerNorm(normalized_shape = the last k dims of x).
ExactTensor layer_norm(const ExactTensor& x, int normalized_dims, double eps);
// nn.InstanceNorm{1,2,3}d(affine=False) on (N, C, ...): each (n, c) over the rest.
ExactTensor instance_norm(const ExactTensor& x, double eps);
// nn.BatchNorm in training mode on (N, C, ...): each channel c over every other axis.
ExactTensor batch_norm(const ExactTensor& x, double eps);

using NormOp = std::function<ExactTensor(const ExactTensor& x, int normalized_dims, double eps)>;

// nn.LayerNorm's default eps, as the float kernels receive it (1e-5f, exactly).
inline constexpr double kTorchEps = static_cast<double>(1e-5f);

// ---- Seed data ----
// Seed 001 section 3: torch.arange(1, 49).view(1, 3, 4, 4).
std::vector<double> seed001_arange48();
// Seed 002: the three (2, 3, 4) outputs it prints (4 decimals each): the
// library's "y:", the manual "y_custom" and the LayerNorm([3, 4]) "y_custom".
struct Seed002Prints {
  std::array<double, 24> library, manual, layernorm_sd;
};
const Seed002Prints& seed002_prints();

// ---- Checks (each claim's Claim row calls these with the real ops) ----
// An equivalence's verdict: holds, with `holds_figure`, when the comparison
// found no counterexample; refuted, with the first counterexample as its
// figure, when it did.
inline void decide_equivalence(ClaimResult& result, const std::string& counterexample, std::string holds_figure) {
  result.verdict = counterexample.empty() ? Verdict::holds : Verdict::refuted;
  result.figure = counterexample.empty() ? std::move(holds_figure) : "counterexample: " + counterexample;
}

// S1 with `layer_norm_op` standing for nn.LayerNorm; the other side of every
// comparison is the explicit definition (flatten / per-pixel loop).
ClaimResult check_s1(const ClaimOptions& options, const NormOp& layer_norm_op,
                     std::span<const Kernel> kernels);
ClaimResult check_s2(const ClaimOptions& options, std::span<const Kernel> kernels);
ClaimResult check_s3(const ClaimOptions& options, std::span<const Kernel> kernels);
ClaimResult check_s4(const ClaimOptions& options, std::span<const Kernel> kernels);

// S5: the backward formula whose exactness is checked. `seed_004` is the
// seed's; `scale_by_d_minus_1` is a plausible slip (1/(d-1) for 1/d) that the
// tests use as a negative control.
enum class BackwardFormula { seed_004, scale_by_d_minus_1 };
ClaimResult check_s5(const ClaimOptions& options, BackwardFormula formula = BackwardFormula::seed_004);

// A1 with `instance_norm_op` standing for nn.InstanceNorm2d (normalized_dims unused).
ClaimResult check_a1(const ClaimOptions& options, const NormOp& instance_norm_op);
// A2 on a (B, S, D) tensor: LayerNorm([S, D]) vs LayerNorm(D), with BatchNorm in
// the same picture. The claim fails unless S = 1 (then both are the same op).
ClaimResult check_a2(const ClaimOptions& options, const ExactTensor& x_bsd);

// A3: what relates two printed (B, S, D) outputs of 4 decimals each, given the
// printed LayerNorm([S, D]) output of the input the manual one came from.
struct PrintedRelation {
  double library_affine_residual = 0;  // worst row: residual of library ~ a*layernorm_sd + c, over its rounding bound
  double manual_affine_residual = 0;   // the same for the manual output (<= 1: same input)
  double scalar_fit_residual = 0;      // worst row: residual of library ~ c*manual, over its rounding bound
  double scalar_fit_factor = 0;        // the c of that fit on the best row (sqrt(d/(d-1)) if unbiased)
  int elements_differing = 0;          // |library - manual| > 2 * 0.5e-4
  double library_row_mean = 0, library_row_variance = 0;  // worst deviation from 0 and from 1 over rows
  std::string cause;                   // "different input", "unbiased variance", "std+eps", "typo", "none"
};
PrintedRelation relate_printed_outputs(std::span<const double> library, std::span<const double> manual,
                                       std::span<const double> layernorm_sd, int batch, int seq, int dim);
ClaimResult check_a3(const ClaimOptions& options);

// The claims' rows (registry.cpp lists them in order).
extern const Claim kClaimS1, kClaimS2, kClaimS3, kClaimS4, kClaimS5, kClaimA1, kClaimA2, kClaimA3;

}  // namespace normcheck::claims
