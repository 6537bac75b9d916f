// The inputs folding is checked on: the stored parameters of one norm and one
// consumer Linear (FoldCase) in a family of magnitudes, and normalized rows
// xhat, random and adversarial. Shared by the claims, `normcheck fold` and the tests.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "fold_check.h"

namespace normcheck::fold {

enum class Family {
  random,           // gamma ~ 1 + 0.2 N, beta ~ 0.2 N, W ~ N(0, 1/d), b ~ 0.1 N: a trained model's scale
  gamma_wide,       // |gamma| = 2^U(-k, k), k = 20 (float32, bf16) or 7 (f16): a wide dynamic range
  gamma_near_zero,  // |gamma| <= 2^-20 (f16: 2^-18, subnormal) or 0, beta ~ N and b ~ -(W beta): the bias cancels
  near_overflow,    // |W_ij gamma_j| spread over [2^14, 2^16.5]: f16 overflows above 65504
  subnormal,        // |W_ij gamma_j| around 2^(min_exp - p/2): inside the storage format's subnormal range
};
inline constexpr Family kFamilies[] = {Family::random, Family::gamma_wide, Family::gamma_near_zero,
                                       Family::near_overflow, Family::subnormal};
std::string_view to_string(Family f);

enum class NormKind { layer, rms };

// gamma, beta (LayerNorm only), W (e x d), b, each rounded to `storage`, and
// their fold by fold_affine().
FoldCase make_case(Family family, NormKind norm, DType storage, long d, long e, std::mt19937_64& rng);

// Normalized rows (float32), `rows` of them, cycling through:
//   gaussian x normalized; a spike (x = e_k); x aligned with the signs of the
//   first output's folded weights (|sum| as large as it gets); x orthogonal to
//   that row (the output cancels). `weights` (folded W, e x d) steers the last two.
std::vector<std::vector<float>> make_xhat_rows(NormKind norm, const Matrix& weights, long rows,
                                               std::mt19937_64& rng);

// LayerNorm (gamma 1, beta 0) or RMSNorm of a row of floats, correctly rounded
// to float32 (the exact reference, normcheck/reference.h): what an exact norm
// kernel without affine hands the Linear.
std::vector<float> normalize(NormKind norm, const std::vector<float>& x, float eps);

}  // namespace normcheck::fold
