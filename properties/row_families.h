// Adversarial floats and the row families where LayerNorm kernels break
// (docs/properties.md), as plain functions of a std::mt19937_64: no RapidCheck,
// so `normcheck report` draws its workload from the same families the property
// suites generate (generators.h wraps them for RapidCheck).
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "normcheck/kernel.h"

namespace normcheck::props {

using Rng = std::mt19937_64;

// What a float generator may produce.
struct FloatLimits {
  double max_abs = 3.4028234663852886e38;  // |v| <= max_abs (exactly)
  bool nonfinite = true;                   // NaN and +-inf allowed
};

// The largest |x| the kernel supports for rows of length d (InputRange).
double max_abs_x(const InputRange& range, int64_t d);

// One float: half the time uniform over all bit patterns within the limits,
// half the time a special (+-0, +-inf, NaN, subnormals, FLT_MIN, FLT_MAX,
// powers of two and their neighbours), each clamped to the limits.
float draw_float(Rng& rng, const FloatLimits& limits);

// Row families for x (and for dy in the backward), docs/properties.md.
enum class RowFamily {
  gaussian_offset,    // c + sigma N(0,1), |c|/sigma log-uniform over 1 .. 1e7 (or 0)
  constant,           // every element equal
  constant_one_ulp,   // constant with one element one ULP away
  heavy_tail,         // Student-t with 1 (Cauchy), 2 or 3 degrees of freedom
  outliers,           // N(0,1) with 1..3 elements 1e3 .. 1e6 times larger
  huge,               // magnitudes near sqrt(FLT_MAX), where x^2 overflows
  tiny,               // magnitudes where x^2 underflows, subnormals
  bit_uniform,        // each element from draw_float (finite)
};
inline constexpr int kRowFamilyCount = 8;
std::string_view to_string(RowFamily family);

// A row of length d from `family`, every |value| <= max_abs (finite).
std::vector<float> draw_row(RowFamily family, int64_t d, double max_abs, Rng& rng);

// c + sigma N(0,1), rounded to float, scaled down as a whole if |c| + 8 sigma
// would pass max_abs (the gaussian_offset family at one chosen c and sigma).
std::vector<float> offset_normal_row(int64_t d, double c, double sigma, double max_abs, Rng& rng);

}  // namespace normcheck::props
