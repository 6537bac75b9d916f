// Seeded random streams and sample means with confidence intervals, for the
// Monte Carlo claim checks (J3-J8). Header-only and tiny on purpose.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace normcheck::claims_mc {

// One independent stream per (claim seed, purpose): splitmix64 of the pair, so
// streams for different purposes do not overlap in their first draws.
inline std::mt19937_64 seeded_rng(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return std::mt19937_64(z ^ (z >> 31));
}

struct MeanInterval {
  double mean = 0;
  double half_width = 0;  // 95% normal-approximation interval: 1.96 * s / sqrt(n)
  std::size_t samples = 0;
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
};

// The Monte Carlo decision: a prediction is consistent with the samples when it
// is within 4 standard errors of their mean (a true prediction fails this with
// probability 6e-5 per test, so a claim with several cases is not refuted by
// chance; figures still print the 95% interval).
inline bool consistent(const MeanInterval& interval, double predicted) {
  return std::abs(interval.mean - predicted) <= 4 * interval.half_width / 1.96;
}

inline MeanInterval mean_interval(std::span<const double> values) {
  MeanInterval out;
  out.samples = values.size();
  if (values.empty()) return out;
  double sum = 0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return out;
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  const double variance = squares / static_cast<double>(values.size() - 1);
  out.half_width = 1.96 * std::sqrt(variance / static_cast<double>(values.size()));
  return out;
}

// The mean interval of `samples` values of draw(), drawn one after another.
template <class Draw>
MeanInterval sample_mean(int samples, Draw draw) {
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(std::max(samples, 0)));
  for (int k = 0; k < samples; ++k) values.push_back(draw());
  return mean_interval(values);
}

// Median and range of a handful of replicates (one per seed), for quantities
// whose spread over seeds is too wide and skewed for a mean +- interval
// (Post-LN's update varies 30x across seeds at N = 64).
struct MedianRange {
  double median = 0, low = 0, high = 0;
  std::size_t samples = 0;
};

inline MedianRange median_range(std::vector<double> values) {
  MedianRange out;
  out.samples = values.size();
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  out.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  out.low = values.front();
  out.high = values.back();
  return out;
}

}  // namespace normcheck::claims_mc
