// The row families where LayerNorm kernels break (docs/properties.md).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "row_families.h"

namespace normcheck::props {
namespace {

double uniform(Rng& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
double normal(Rng& rng) { return std::normal_distribution<double>(0.0, 1.0)(rng); }
double random_sign(Rng& rng) { return (rng() & 1) ? -1.0 : 1.0; }

// Rounds to float and keeps |v| <= max_abs (values drawn past the range are
// pulled back to its edge, which is itself an adversarial value).
float to_range(double v, double max_abs) {
  const double clamped = std::clamp(v, -max_abs, max_abs);
  float f = static_cast<float>(clamped);
  if (std::fabs(static_cast<double>(f)) > max_abs) f = std::nextafter(f, 0.0f);
  return f;
}

// c + sigma * z_i, scaled down as a whole if |c| + 8 sigma would leave the range.
template <typename Noise>
std::vector<float> offset_row(int64_t d, double c, double sigma, double max_abs, Rng& rng,
                              Noise noise) {
  const double reach = std::fabs(c) + 8 * sigma;
  const double shrink = reach > max_abs ? max_abs / reach : 1.0;
  std::vector<float> row(static_cast<size_t>(d));
  for (auto& v : row) v = to_range(shrink * (c + sigma * noise(rng)), max_abs);
  return row;
}

}  // namespace

std::string_view to_string(RowFamily family) {
  switch (family) {
    case RowFamily::gaussian_offset: return "gaussian_offset";
    case RowFamily::constant: return "constant";
    case RowFamily::constant_one_ulp: return "constant_one_ulp";
    case RowFamily::heavy_tail: return "heavy_tail";
    case RowFamily::outliers: return "outliers";
    case RowFamily::huge: return "huge";
    case RowFamily::tiny: return "tiny";
    case RowFamily::bit_uniform: return "bit_uniform";
  }
  return "?";
}

std::vector<float> offset_normal_row(int64_t d, double c, double sigma, double max_abs, Rng& rng) {
  return offset_row(d, c, sigma, max_abs, rng, normal);
}

std::vector<float> draw_row(RowFamily family, int64_t d, double max_abs, Rng& rng) {
  const FloatLimits finite{max_abs, false};
  switch (family) {
    case RowFamily::gaussian_offset: {
      // |mu|/sigma: 0 a quarter of the time, else log-uniform over 1 .. 1e7.
      const double sigma = std::ldexp(1.0, static_cast<int>(uniform(rng, -30, 30)));
      const double ratio = (rng() % 4 == 0) ? 0.0 : std::pow(10.0, uniform(rng, 0, 7));
      return offset_row(d, random_sign(rng) * ratio * sigma, sigma, max_abs, rng, normal);
    }
    case RowFamily::constant: {
      return std::vector<float>(static_cast<size_t>(d), draw_float(rng, finite));
    }
    case RowFamily::constant_one_ulp: {
      float v = draw_float(rng, finite);
      std::vector<float> row(static_cast<size_t>(d), v);
      // Away from zero when that stays in range, else toward zero.
      float neighbour = std::nextafter(v, v < 0 ? -INFINITY : INFINITY);
      if (!(std::fabs(static_cast<double>(neighbour)) <= max_abs)) neighbour = std::nextafter(v, 0.0f);
      row[rng() % row.size()] = neighbour;
      return row;
    }
    case RowFamily::heavy_tail: {
      // Student-t: z / sqrt(chi2_nu / nu); nu = 1 is Cauchy.
      const double nu = static_cast<double>(1 + rng() % 3);
      const double scale = std::ldexp(1.0, static_cast<int>(uniform(rng, -10, 10)));
      const double c = (rng() & 1) ? 0.0 : random_sign(rng) * std::pow(10.0, uniform(rng, 0, 3)) * scale;
      return offset_row(d, c, scale, max_abs, rng, [nu](Rng& r) {
        return normal(r) / std::sqrt(std::chi_squared_distribution<double>(nu)(r) / nu);
      });
    }
    case RowFamily::outliers: {
      // LLM activations: a few channels 1e3 .. 1e6 times the rest.
      auto row = offset_row(d, 0.0, 1.0, max_abs, rng, normal);
      const int64_t count = 1 + static_cast<int64_t>(rng() % 3);
      for (int64_t k = 0; k < count; ++k) {
        auto& v = row[rng() % row.size()];
        v = to_range(random_sign(rng) * std::pow(10.0, uniform(rng, 3, 6)) * (1 + std::fabs(normal(rng))), max_abs);
      }
      return row;
    }
    case RowFamily::huge: {
      // Around sqrt(FLT_MAX) ~ 2^64 and up to the range limit, either spread
      // over a binade or clustered (large |mu|/sigma at huge magnitude).
      const double top = std::min(max_abs, std::ldexp(1.0, static_cast<int>(uniform(rng, 60, 129))));
      if (rng() & 1) {
        std::vector<float> row(static_cast<size_t>(d));
        for (auto& v : row) v = to_range(random_sign(rng) * top * uniform(rng, 0.25, 1.0), max_abs);
        return row;
      }
      return offset_row(d, random_sign(rng) * top * 0.5, top * std::ldexp(1.0, -static_cast<int>(uniform(rng, 4, 20))),
                        max_abs, rng, normal);
    }
    case RowFamily::tiny: {
      // x^2 underflows below 2^-75; subnormals below 2^-126.
      const double scale = std::ldexp(1.0, static_cast<int>(uniform(rng, -149, -60)));
      const double c = (rng() & 1) ? 0.0 : random_sign(rng) * scale * std::pow(10.0, uniform(rng, 0, 4));
      return offset_row(d, c, scale, max_abs, rng, normal);
    }
    case RowFamily::bit_uniform: {
      std::vector<float> row(static_cast<size_t>(d));
      for (auto& v : row) v = draw_float(rng, finite);
      return row;
    }
  }
  return {};
}

}  // namespace normcheck::props
