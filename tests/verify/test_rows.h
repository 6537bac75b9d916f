// Rows the reference tests run on: random rows of several lengths and the
// adversarial ones a float reference gets wrong (large |mean|/sigma, squares
// beyond the float range, subnormals, cancelling magnitudes, constant rows),
// and rows whose outputs sit next to rounding midpoints.
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

struct RowWithEps {
  std::string name;
  std::vector<float> x;
  float eps;
};

// Rows whose outputs sit on or next to float (and double) rounding midpoints,
// where a fixed-precision reference rounds wrongly: with eps >> sigma^2,
// xhat = (x - mu)(1 - sigma^2/(2 eps) + ...) is a hair off x - mu, and a
// (x - mu) on a midpoint turns into a false tie once sigma^2/eps is below
// the working precision (sigma^2 ~ 2^-300 with eps = 1: both 256 and 512
// bits). Also rows mixing 1e38 and 1e-45 (a 256-bit sum is inexact), d up
// to 4096.
inline std::vector<RowWithEps> near_midpoint_rows(std::mt19937_64& rng) {
  std::vector<RowWithEps> rows = {
      // x - mu = -+3 2^-150, the midpoint between 2^-149 (odd) and 2^-148:
      // the exact xhat is just inside, so rounds to -+2^-149, the tie to -+2^-148.
      {"subnormal tie trap", {0.0f, 3 * 0x1p-149f}, 1.0f},
      // The sanitizer CI's failure (NORMCHECK_SEED=10124552135940249666,
      // "subnormals", eps 1): xhat[1] was rounded as a tie.
      {"seed 10124552135940249666 subnormals",
       {-0x1.d9p-141f, -0x1.b7p-140f, 0x1.18p-144f, -0x1.2cp-141f, 0x1p-146f, -0x1.18p-143f,
        0x1.518p-140f, 0x1.aa8p-140f, -0x1.69p-140f, -0x1.08p-140f, -0x1.54p-142f,
        0x1.2c8p-140f, -0x1.bp-142f, 0x1.ecp-142f, 0x1.2cp-143f, 0x1.e5p-141f, 0x1.19p-139f,
        0x1.188p-140f, -0x1.67p-140f, -0x1.3p-144f},
       1.0f},
      // x - mu = (2^54 - 1) 2^-121: a double midpoint; sigma^2/eps ~ 2^-258.
      {"double tie trap", {0x1p-120f, 0x1p-66f}, 0x1p126f},
      // x - mu = (2^25 - 1) 2^-101, xhat ~ 2^-139 (subnormal); sigma^2/eps ~ 2^-278.
      {"subnormal xhat, eps 2^126", {0x1p-100f, 0x1p-75f}, 0x1p126f},
      {"1e38 and 1e-45, d = 5", {1e38f, -1e38f, 1e-45f, 1e38f, 1e-45f}, 1e-5f},
  };
  std::uniform_int_distribution<int> small(-40, 40);
  for (int log_d : {1, 2, 6, 12}) {
    const std::size_t d = std::size_t{1} << log_d;
    for (float eps : {1.0f, 0x1p-20f, 0x1p126f}) {
      if (log_d == 12 && eps != 1.0f) continue;  // one long row is enough
      std::vector<float> x(d);
      for (auto& v : x) v = static_cast<float>(small(rng)) * 0x1p-149f;
      rows.push_back({"subnormal multiples, d = " + std::to_string(d), x, eps});
    }
  }
  std::vector<float> mixed(4096, 1e-45f);
  mixed[0] = mixed[7] = mixed[100] = 1e38f;
  mixed[1] = mixed[2000] = -1e38f;
  rows.push_back({"1e38 and 1e-45, d = 4096", mixed, 1e-5f});
  return rows;
}

}  // namespace normcheck::test
