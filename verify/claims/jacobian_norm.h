// J1's exact check, exposed so a test can feed it a wrong LayerNorm
// (negative control). No Boost type here: the MPFR code is in j1_*.cpp only.
#pragma once

#include <cstdint>
#include <vector>

namespace normcheck::claims_jacobian {

enum class LayerNormForm {
  definition,    // (z - mean) / sqrt(var + eps): what nn.LayerNorm computes
  std_plus_eps,  // (z - mean) / (std + eps): seed 001's hand-written form (S2), a wrong eps term
};

// The spectral norm of dLN(z)/dz, from a Jacobian built by central differences
// of `form` at 100 decimal digits (step 1e-35: truncation ~1e-70, rounding
// ~1e-65) and MPFR JacobiSVD. Returned rounded to double.
double spectral_norm(const std::vector<double>& z, double eps, LayerNormForm form);

// max over rows z (d = 3, 4, 16, 32 and, with max_d = 64, 64; eps = 0 and
// 1e-5; random, seeded) of
// |spectral_norm(z, eps, form) - 1/sqrt(sigma^2 + eps)| * sqrt(sigma^2 + eps),
// evaluated at 100 digits (the double rounding above is not involved).
double max_relative_mismatch(LayerNormForm form, unsigned long long seed, int max_d);

// The claim sqrt(d)/||z|| over the exact spectral norm (MPFR SVD above) for one
// seeded row of width d with |mean|/sigma and eps/sigma^2 as given (sigma = 1).
double claim_over_exact(int d, double mean_over_sigma, double eps_over_sigma2, uint64_t seed);

// The largest |mean|/sigma for which the claim is within `tolerance` of the
// exact value when eps = 0: from claim/exact = 1/sqrt(1 + t^2),
// t = sqrt(1/(1 - tolerance)^2 - 1) (0.1425 for 1%).
double claim_within_threshold(double tolerance);

}  // namespace normcheck::claims_jacobian
