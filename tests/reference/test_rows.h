// Rows the reference tests run on: random rows of several lengths and the
// adversarial ones a float reference gets wrong (large |mean|/sigma, squares
// beyond the float range, subnormals, cancelling magnitudes, constant rows).
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace normcheck::test {

struct NamedRow {
  std::string name;
  std::vector<float> x;
};

inline std::vector<NamedRow> test_rows(std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0.5, 1.0);
  const float flt_max = std::numeric_limits<float>::max();
  auto make = [&](int d, auto value) {
    std::vector<float> x(d);
    for (int i = 0; i < d; ++i) x[i] = static_cast<float>(value(i));
    return x;
  };
  std::vector<NamedRow> rows;
  for (int d : {1, 2, 3, 7, 64, 500})
    rows.push_back({"normal d=" + std::to_string(d), make(d, [&](int) { return normal(rng); })});
  rows.push_back({"1e4 + N(0,1)", make(64, [&](int) { return 1e4 + normal(rng); })});
  rows.push_back({"2^20 + small ints",
                  make(33, [&](int) { return 0x1p20 + std::round(4 * normal(rng)); })});
  rows.push_back({"one ulp apart at 3e7", make(40, [&](int i) {
                    return i % 3 ? 3e7f : std::nextafter(3e7f, 4e7f);
                  })});
  rows.push_back({"near FLT_MAX, mixed signs",
                  make(16, [&](int i) { return (i % 2 ? -1 : 1) * unit(rng) * flt_max; })});
  rows.push_back({"near FLT_MAX, one sign", make(16, [&](int) { return unit(rng) * flt_max; })});
  rows.push_back({"1e30 + ulps (squares overflow)",
                  make(24, [&](int) { return 1e30 * (1 + 0x1p-22 * std::round(normal(rng))); })});
  rows.push_back({"subnormals", make(20, [&](int) { return normal(rng) * 0x1p-140; })});
  rows.push_back({"cancelling magnitudes", make(12, [&](int i) {
                    const double big[] = {1e30, -1e30, 1e-30, 3.0, -2e-38, 0x1p-149};
                    return big[i % 6] * (i < 6 ? 1 : -0.5);
                  })});
  rows.push_back({"constant", make(8, [](int) { return 0.1f; })});
  rows.push_back({"zeros", make(5, [](int) { return 0.0f; })});
  return rows;
}

}  // namespace normcheck::test
