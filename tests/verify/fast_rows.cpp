#include "fast_rows.h"

#include <bit>
#include <cmath>
#include <limits>

#include "test_rows.h"

namespace normcheck::test {

std::vector<int64_t> four_squares(int64_t R) {
  auto isqrt = [](int64_t v) {
    auto r = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
    while (r * r > v) --r;
    while ((r + 1) * (r + 1) <= v) ++r;
    return r;
  };
  for (int64_t a = isqrt(R), w2 = a; w2 > a - 50 && w2 >= 0; --w2)
    for (int64_t b = isqrt(R - w2 * w2), w3 = b; w3 > b - 200 && w3 >= 0; --w3)
      for (int64_t c = isqrt(R - w2 * w2 - w3 * w3), w4 = c; w4 > c - 2000 && w4 >= 0; --w4) {
        const int64_t rest = R - w2 * w2 - w3 * w3 - w4 * w4;
        const int64_t w5 = isqrt(rest);
        if (w5 * w5 == rest) return {w2, w3, w4, w5};
      }
  return {};
}

bool same(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }
bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

namespace {

// Affine parameters for d elements: none, gamma only, or both.
void add_affine_variants(std::vector<FastCase>& out, FastCase c, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0, 1);
  const std::size_t d = c.x.size();
  out.push_back(c);
  c.gamma.resize(d);
  for (float& g : c.gamma) g = 1 + 0.5f * normal(rng);
  out.push_back(c);
  c.beta.resize(d);
  for (float& b : c.beta) b = normal(rng);
  out.push_back(c);
}

}  // namespace

std::vector<FastCase> fast_cases(std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<FastCase> out;
  auto row = [&](int d, auto value) {
    std::vector<float> x(d);
    for (int i = 0; i < d; ++i) x[i] = static_cast<float>(value(i));
    return x;
  };
  const float epss[] = {0.0f, 1e-5f, 1.0f, 0x1p100f};
  for (int d : {1, 2, 3, 5, 7, 16, 64, 257, 1000, 4096})
    for (float eps : epss) {
      if (d == 4096 && eps != 1e-5f) continue;  // long rows: one eps is enough
      add_affine_variants(out, {d == 1        ? "normal, d = 1"
                                : eps == 1e-5f ? "normal"
                                               : "normal, eps 0, 1, 2^100",
                                row(d, [&](int) { return normal(rng); }), {}, {}, eps},
                          rng);
    }
  for (double shift : {1e4, 3e7, 1e30})
    for (float eps : epss)
      add_affine_variants(out, {"shifted", row(64, [&](int) { return shift * (1 + 1e-6 * normal(rng)); }),
                                {}, {}, eps},
                          rng);
  for (int rep = 0; rep < 4; ++rep)
    for (float eps : epss) {
      // Exponents over 2^-120 .. 2^120: the 128-bit integers, or beyond them.
      const int span = rep < 2 ? 60 : 240;
      add_affine_variants(out, {"wide exponents", row(33, [&](int) {
                                  const double s = unit(rng) < 0.5 ? -1 : 1;
                                  return s * (1 + unit(rng)) * std::ldexp(1.0, static_cast<int>(unit(rng) * span) - span / 2);
                                }), {}, {}, eps},
                          rng);
      add_affine_variants(out, {"subnormal", row(40, [&](int) { return normal(rng) * 0x1p-140; }), {}, {}, eps}, rng);
      add_affine_variants(out, {"near FLT_MAX", row(16, [&](int) {
                                  return (unit(rng) < 0.5 ? -1 : 1) * (0.5 + 0.5 * unit(rng)) * 3.4e38;
                                }), {}, {}, eps},
                          rng);
      add_affine_variants(out, {"small integers", row(12, [&](int) { return std::round(3 * normal(rng)); }),
                                {}, {}, eps},
                          rng);
    }
  // y cancelling: beta = -float(gamma xhat) from a double estimate of xhat.
  for (int rep = 0; rep < 8; ++rep) {
    FastCase c{"y cancels", row(64, [&](int) { return normal(rng); }), {}, {}, 1e-5f};
    double mean = 0, var = 0;
    for (float v : c.x) mean += v;
    mean /= 64;
    for (float v : c.x) var += (v - mean) * (v - mean);
    const double r = 1 / std::sqrt(var / 64 + 1e-5);
    c.gamma.resize(64);
    c.beta.resize(64);
    for (int i = 0; i < 64; ++i) {
      c.gamma[i] = static_cast<float>(1 + normal(rng));
      c.beta[i] = -static_cast<float>(c.gamma[i] * (c.x[i] - mean) * r);
    }
    out.push_back(c);
  }
  // Exact double midpoints: x = a {4, -1, -1, -1, -1} has c = 1/(10 a) (not
  // dyadic) and xhat = {2, -1/2, ...} exactly; with beta = 1 and gamma =
  // -+2^-52 (xhat -1/2) or -+2^-54 (xhat 2), y = 1 +- 2^-53 or 1 -+ 2^-54: ties
  // that round to 1 (even); the double-double value lies a hair to one side.
  for (float a : {1.0f, 3.0f, 9.5f, 0.1f, 7.0f, 1e-3f, 11.0f, 13.0f, 1e5f, 0.7f}) {
    const std::vector<float> x = {4 * a, -a, -a, -a, -a};
    for (float sign : {1.0f, -1.0f})
      out.push_back({"double midpoints, beta = 1", x, {-sign * 0x1p-54f, sign * 0x1p-52f, sign * 0x1p-53f, -sign * 0x1p-52f, -sign * 0x1p-53f},
                     {1, 1, 1, 1, 1}, 0.0f});
  }
  // Exact double midpoints with y ~ gamma xhat (no cancellation, so the
  // double-double error of y is ~2^-106 of y, as large as its low part can
  // show): RMSNorm of x = q w, w_1^2 + ... + w_5^2 = 5 4^18, q odd, has
  // c = sqrt(5 / N) = 1 / (q 2^18), not dyadic, and xhat_1 = w_1 2^-18 (19
  // bits); gamma_1 = 1 + k 2^-23 makes gamma xhat 42 bits and beta_1 =
  // +-(2^23 + 2 j + 1) 2^-53 (~2^-30) sets the 2^-53 bit of y_1 in [1, 2):
  // an exact double midpoint.
  for (int64_t q : {3, 5, 7, 9, 11, 13, 15})
    for (int64_t w1 : {(int64_t{1} << 18) + 1, (int64_t{1} << 18) + 12345, (int64_t{1} << 18) + 77777}) {
      const std::vector<int64_t> rest = four_squares(5 * (int64_t{1} << 36) - w1 * w1);
      if (rest.empty()) continue;
      std::vector<float> x = {static_cast<float>(q * w1)};
      for (int64_t w : rest) x.push_back(static_cast<float>(q * w));  // < 2^23: exact
      for (int k : {1, 3})
        for (int j : {0, 5}) {
          const float b = static_cast<float>(std::ldexp(static_cast<double>((1 << 23) + 2 * j + 1), -53));
          for (float sign : {1.0f, -1.0f}) {
            FastCase c{"double midpoints, y ~ gamma xhat", x, {1 + k * 0x1p-23f, 1, 1, 1, 1}, {sign * b, 0, 0, 0, 0}, 0.0f};
            c.layer = false;
            out.push_back(c);
          }
        }
    }
  for (auto& [name, x] : test::test_rows(rng))
    for (float eps : {0.0f, 1e-5f, 1.0f}) add_affine_variants(out, {"test_rows: " + name, x, {}, {}, eps}, rng);
  for (auto& [name, x, eps] : test::near_midpoint_rows(rng))
    add_affine_variants(out, {"near midpoints: " + name, x, {}, {}, eps}, rng);
  // Zeros and non-finite values.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  out.push_back({"zeros", {0.0f, -0.0f, 1.0f, 2.0f}, {1, 0, -0.0f, 2}, {0, 0, -0.0f, 1}, 1e-5f});
  out.push_back({"zero element", {-0.0f, 1.0f, -1.0f}, {}, {}, 0.0f});
  out.push_back({"inf in x", {1.0f, inf, 2.0f}, {}, {}, 1e-5f});
  out.push_back({"nan in x", {1.0f, nan, 2.0f}, {}, {}, 1e-5f});
  out.push_back({"inf gamma", {1.0f, 3.0f, 2.0f}, {1, inf, 1}, {0, 0, 0}, 1e-5f});
  out.push_back({"nan beta", {1.0f, 3.0f, 2.0f}, {1, 1, 1}, {0, nan, 0}, 1e-5f});
  return out;
}

}  // namespace normcheck::test
