// Differential test of the backward references' fast phase
// (verify/reference_fast_bwd.cpp) against the MPFR path: on every row the
// fast phase decides, dx (float and double) and the row scales mean|g| and
// mean|g xhat| must be bit for bit mp::NormRow::backward's; on every problem
// whose column sums it decides, dgamma, dbeta (float and double) and the
// column scales must be bit for bit mp::column_sums', whatever the split of
// the rows into partial sums. Rows: the forward fast phase's (fast_rows.h)
// with dy drawn several ways (normal, zeros and +-1, scaled by 2^+-60, one
// non-finite), rows and columns whose sums of |g|, dy and |dy| are exact
// double or float midpoints, and rows built so that an exact dx or an exact
// dgamma is a double midpoint reached through a c that is not dyadic. Seeded
// (NORMCHECK_SEED, printed).
//
// How it fails: a fast value that is not the correct rounding, or a scale
// that is not the MPFR path's double (a bound that misses an error term, a
// chain of partial sums counted short, a wrong sign of zero, a non-finite
// row decided). The negative control drops every error allowance
// (bound_scale = 0) and requires the comparison to find wrong values on the
// midpoint rows and problems.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fast_rows.h"
#include "normcheck/reference.h"
#include "reference_fast.h"
#include "reference_mp.h"
#include "test_seed.h"

namespace normcheck {
namespace {

struct Tally {
  int rows = 0, decided = 0, mismatches = 0;
  std::string first;  // the first mismatch
  void mismatch(const std::string& what) {
    ++mismatches;
    if (first.empty()) first = what;
  }
};

mp::Norm norm_of(bool layer) { return layer ? mp::Norm::layer : mp::Norm::rms; }

// --- Rows ------------------------------------------------------------------

struct BackwardCase {
  std::string family;
  bool layer;
  std::vector<float> x, dy, gamma;
  float eps;
};

// The dy rows drawn for each forward row.
void add_dy_variants(std::vector<BackwardCase>& out, const test::FastCase& c, bool layer,
                     std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> three(-1, 1);
  const std::string family = c.family.substr(0, c.family.find(':'));
  const std::size_t d = c.x.size();
  auto draw = [&](auto value) {
    std::vector<float> dy(d);
    for (std::size_t i = 0; i < d; ++i) dy[i] = static_cast<float>(value(i));
    return dy;
  };
  out.push_back({family + ", dy normal", layer, c.x, draw([&](std::size_t) { return normal(rng); }), c.gamma, c.eps});
  out.push_back({family + ", dy in {0, +-1}", layer, c.x, draw([&](std::size_t) { return three(rng); }), c.gamma, c.eps});
  for (int e : {60, -60})
    out.push_back({family + ", dy scaled", layer, c.x,
                   draw([&](std::size_t) { return std::ldexp(normal(rng), e); }), c.gamma, c.eps});
}

// RMSNorm rows x = q w (q odd, w_1^2 + ... + w_5^2 = 5 4^18, no zero w) have
// rrms = 1 / (q 2^18), not dyadic, and xhat = w 2^-18 exactly; with integer
// dy of 20 or 21 bits (no gamma), Sigma = sum dy_j w_j = 5 Sigma' and K_i = dy_i 2^36 - w_i Sigma',
//   dx_i = rrms (dy_i - xhat_i mean(dy xhat)) = K_i / (q 2^54),
// a double midpoint when q divides K_i and K_i / q is 54 significant bits
// with its last one set. Rows with at least one such dx_i are kept.
std::vector<BackwardCase> dx_midpoint_rows(std::mt19937_64& rng) {
  std::vector<BackwardCase> out;
  std::uniform_int_distribution<int64_t> magnitude(int64_t{1} << 19, (int64_t{1} << 21) - 1);
  for (int64_t q : {3, 5, 7, 9, 11, 13})
    for (int64_t w1 : {(int64_t{1} << 18) + 1, (int64_t{1} << 18) + 12345, (int64_t{1} << 18) + 77777}) {
      std::vector<int64_t> w = test::four_squares(5 * (int64_t{1} << 36) - w1 * w1);
      if (w.empty()) continue;
      w.insert(w.begin(), w1);
      bool zero = false;
      for (int64_t v : w) zero |= v == 0;
      if (zero) continue;
      int kept = 0;
      for (int attempt = 0; attempt < 2000 && kept < 3; ++attempt) {
        std::vector<int64_t> dy(5);
        int64_t sigma = 0;
        for (int j = 0; j < 5; ++j) {
          dy[j] = (rng() & 1 ? -1 : 1) * magnitude(rng);
          sigma += dy[j] * w[j];
        }
        if (sigma % 5 != 0) continue;
        bool midpoint = false;
        for (int i = 0; i < 5; ++i) {
          const int64_t k = dy[i] * (int64_t{1} << 36) - w[i] * (sigma / 5);
          if (k == 0 || k % q != 0) continue;
          uint64_t m = static_cast<uint64_t>(k < 0 ? -(k / q) : k / q);
          m >>= std::countr_zero(m);
          midpoint |= std::bit_width(m) == 54;
        }
        if (!midpoint) continue;
        BackwardCase c{"dx midpoints", false, {}, {}, {}, 0.0f};
        for (int j = 0; j < 5; ++j) {
          c.x.push_back(static_cast<float>(q * w[j]));  // < 2^23: exact
          c.dy.push_back(static_cast<float>(dy[j]));    // < 2^21: exact
        }
        out.push_back(c);
        ++kept;
      }
    }
  return out;
}

std::vector<BackwardCase> backward_cases(std::mt19937_64& rng) {
  std::vector<BackwardCase> out;
  for (const test::FastCase& c : test::fast_cases(rng))
    for (bool layer : {true, false})
      if (layer ? c.layer : c.rms) add_dy_variants(out, c, layer, rng);
  for (BackwardCase& c : dx_midpoint_rows(rng)) out.push_back(c);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (bool layer : {true, false}) {
    out.push_back({"non-finite dy", layer, {1, 2, 4}, {1, inf, 0}, {}, 1e-5f});
    out.push_back({"non-finite dy", layer, {1, 2, 4}, {nan, 1, 0}, {1, 2, 3}, 1e-5f});
    out.push_back({"non-finite gamma", layer, {1, 2, 4}, {1, 1, 1}, {1, inf, 3}, 1e-5f});
    out.push_back({"dy zero", layer, {1, 2, 4}, {0, -0.0f, 0}, {1, 2, 3}, 1e-5f});
    // sum|g| = 1 + 2^-53 and 1 + 3 2^-53: exact double midpoints (ties to even).
    out.push_back({"sum|g| a double midpoint", layer, {1, 2, 4}, {1, 0x1p-53f, -0.5f}, {1, 1, 0x1p-1f}, 1e-5f});
    out.push_back({"sum|g| a double midpoint", layer, {1, 2, 4}, {1, 0x1p-53f, 0x1p-52f}, {}, 1e-5f});
  }
  return out;
}

// Compares one row's fast backward with the MPFR path's.
void compare_row(const BackwardCase& c, double bound_scale, Tally& t) {
  ++t.rows;
  fast::ForwardRow forward;
  fast::BackwardRow fast_row;
  if (!fast::forward_row(c.layer, c.x, {}, {}, c.eps, forward) ||
      !fast::backward_row(c.layer, forward, c.dy, c.gamma, kDefaultPrecisionBits, fast_row, bound_scale))
    return;
  ++t.decided;
  mp::NormRow slow(norm_of(c.layer), kDefaultPrecisionBits);
  slow.forward(c.x, {}, {}, c.eps, /*with_y=*/false);
  slow.backward(c.dy, c.gamma);
  std::string bad;
  if (!test::same(fast_row.mean_abs_g, slow.mean_abs_g)) bad += " mean_abs_g";
  if (!test::same(fast_row.mean_abs_g_xhat, slow.mean_abs_g_xhat)) bad += " mean_abs_g_xhat";
  for (std::size_t i = 0; i < c.x.size(); ++i)
    if (!test::same(fast_row.dx[i].f, slow.dx[i].f) || !test::same(fast_row.dx[i].d, slow.dx[i].d))
      bad += " dx[" + std::to_string(i) + "]";
  if (!bad.empty())
    t.mismatch(std::string(c.layer ? "LayerNorm " : "RMSNorm ") + c.family + ", d = " +
               std::to_string(c.x.size()) + ", eps " + std::to_string(c.eps) + ":" + bad);
}

std::map<std::string, Tally> run_rows(double bound_scale) {
  std::mt19937_64 rng(test::test_seed());
  std::map<std::string, Tally> by_family;
  for (const BackwardCase& c : backward_cases(rng)) compare_row(c, bound_scale, by_family[c.family]);
  return by_family;
}

// --- Column sums -------------------------------------------------------------

struct Problem {
  std::string family;
  bool layer;
  int64_t rows, cols;
  std::vector<float> x, dy;
  float eps;
};

// Three RMSNorm rows of the dx_midpoint_rows kind, x1 = x2 = q1 w and
// x3 = q2 w', xhat exactly w 2^-18 and w' 2^-18 through non-dyadic c; with
// dy1_j = b_j (~2^23) and dy2_j = s_j - b_j, s_j w_j of 37 bits, and
// dy3 = 2^-17: dgamma_j = 2^-35 (s_j w_j 2^17 + w'_j), 54 significant bits
// with the last one set (a double midpoint) when w'_j is odd and the sum
// does not carry. The terms of rows 1 and 2 cancel to s_j w_j 2^-18, so
// their double-double errors (2^-106 of ~2^24) show beside the midpoint.
std::vector<Problem> dgamma_midpoint_problems(std::mt19937_64& rng) {
  std::vector<Problem> out;
  std::vector<std::vector<int64_t>> ws;
  for (int64_t w1 : {(int64_t{1} << 18) + 1, (int64_t{1} << 18) + 12345, (int64_t{1} << 18) + 77777,
                     (int64_t{1} << 18) + 4321}) {
    std::vector<int64_t> w = test::four_squares(5 * (int64_t{1} << 36) - w1 * w1);
    if (w.empty()) continue;
    w.insert(w.begin(), w1);
    bool zero = false;
    for (int64_t v : w) zero |= v == 0;
    if (!zero) ws.push_back(w);
  }
  for (std::size_t a = 0; a < ws.size(); ++a)
    for (std::size_t b = 0; b < ws.size(); ++b)
      for (int64_t q1 : {3, 7})
        for (int64_t q2 : {5, 9}) {
          Problem p{"dgamma midpoints", false, 3, 5, {}, {}, 0.0f};
          for (int row = 0; row < 2; ++row)
            for (int64_t v : ws[a]) p.x.push_back(static_cast<float>(q1 * v));
          for (int64_t v : ws[b]) p.x.push_back(static_cast<float>(q2 * v));
          std::vector<int64_t> s_j, b_j;
          for (int64_t v : ws[a]) {
            const int64_t lo = ((int64_t{1} << 36) + v - 1) / v, hi = ((int64_t{1} << 37) - 1) / v;
            s_j.push_back(lo <= hi && hi < (int64_t{1} << 22) ? std::uniform_int_distribution<int64_t>(lo, hi)(rng) : 0);
            b_j.push_back(std::uniform_int_distribution<int64_t>(int64_t{1} << 22, (int64_t{1} << 23) - 1)(rng));
          }
          for (int j = 0; j < 5; ++j) p.dy.push_back(static_cast<float>(b_j[j]));
          for (int j = 0; j < 5; ++j) p.dy.push_back(static_cast<float>(s_j[j] - b_j[j]));  // |.| < 2^23: exact
          for (int j = 0; j < 5; ++j) p.dy.push_back(0x1p-17f);
          out.push_back(p);
        }
  return out;
}

std::vector<Problem> column_problems(std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<Problem> out;
  auto draw = [&](std::size_t n, double scale, double shift) {
    std::vector<float> v(n);
    for (float& e : v) e = static_cast<float>(shift + scale * normal(rng));
    return v;
  };
  for (bool layer : {true, false}) {
    for (int64_t rows : {1, 2, 7, 64, 300})
      for (int64_t cols : {1, 3, 16, 64}) {
        // LayerNorm of d = 1: xhat = 0, dgamma an exact 0 (MPFR's sign of zero)
        const char* family = layer && cols == 1 ? "LayerNorm, d = 1" : "normal";
        out.push_back({family, layer, rows, cols, draw(rows * cols, 1, 0), draw(rows * cols, 1, 0), 1e-5f});
      }
    out.push_back({"many rows", layer, 4096, 4, draw(4096 * 4, 1, 0), draw(4096 * 4, 1, 0), 1e-5f});
    out.push_back({"scaled", layer, 50, 8, draw(400, 1e20, 0), draw(400, 1e-20, 0), 1e-5f});
    out.push_back({"shifted", layer, 50, 8, draw(400, 1, 3e4), draw(400, 1, 0), 1e-5f});
    Problem zero_column{"a zero dy column", layer, 20, 6, draw(120, 1, 0), draw(120, 1, 0), 1e-5f};
    for (int64_t i = 0; i < 20; ++i) zero_column.dy[i * 6 + 2] = (i % 2) ? 0.0f : -0.0f;
    out.push_back(zero_column);
    Problem bad_dy{"a non-finite dy", layer, 5, 4, draw(20, 1, 0), draw(20, 1, 0), 1e-5f};
    bad_dy.dy[13] = std::numeric_limits<float>::infinity();
    out.push_back(bad_dy);
    // A row the forward fast phase leaves whole (a NaN), and one whose
    // outputs it leaves but whose c it has (LayerNorm: constant; RMSNorm:
    // zero, left whole).
    Problem nan_row{"a row the fast phase leaves", layer, 4, 3, draw(12, 1, 0), draw(12, 1, 0), 1e-5f};
    nan_row.x[4] = std::numeric_limits<float>::quiet_NaN();
    out.push_back(nan_row);
    Problem constant{"a constant row", layer, 4, 3, draw(12, 1, 0), draw(12, 1, 0), 1e-5f};
    for (int j = 0; j < 3; ++j) constant.x[3 + j] = layer ? 2.0f : 0.0f;
    out.push_back(constant);
    // dbeta and sum|dy| on exact double midpoints (1 + 2^-53, 1 + 3 2^-53:
    // ties to even) and on float midpoints (1 + 2^-24).
    Problem ties{"exact midpoint sums", layer, 3, 4, draw(12, 1, 0), {}, 1e-5f};
    ties.dy = {1, 1, -1, 1, 0x1p-53f, 0x1p-53f, -0x1p-53f, 0x1p-24f, 0, 0x1p-52f, 0, 0};
    out.push_back(ties);
    // Opposite dy on identical rows: dgamma and dbeta exactly 0.
    Problem cancel{"cancelling rows", layer, 2, 5, draw(5, 1, 0), draw(5, 1, 0), 1e-5f};
    cancel.x.insert(cancel.x.end(), cancel.x.begin(), cancel.x.end());
    for (int j = 0; j < 5; ++j) cancel.dy.push_back(-cancel.dy[j]);
    out.push_back(cancel);
  }
  for (Problem& p : dgamma_midpoint_problems(rng)) out.push_back(p);
  return out;
}

// Compares the fast column sums of `p`, its rows split into `parts` partial
// sums, with the MPFR path's.
void compare_columns(const Problem& p, int parts, double bound_scale, Tally& t) {
  ++t.rows;
  fast::ColumnSums sums(p.cols, bound_scale);
  fast::ForwardRow forward;
  for (int part = 0; part < parts; ++part) {
    fast::ColumnSums partial(p.cols, bound_scale);
    for (int64_t i = p.rows * part / parts; i < p.rows * (part + 1) / parts; ++i) {
      const std::span<const float> x(p.x.data() + i * p.cols, p.cols), dy(p.dy.data() + i * p.cols, p.cols);
      fast::forward_row(p.layer, x, {}, {}, p.eps, forward);  // the column sums need its state only
      if (forward.has_state)
        partial.add(forward, dy);
      else
        partial.fail();
    }
    sums.merge(partial);
  }
  fast::ColumnSums::Decided fast_columns;
  if (!sums.decide(kDefaultPrecisionBits, fast_columns)) return;
  ++t.decided;
  const mp::ColumnValues slow = mp::column_sums(norm_of(p.layer), p.dy, p.x, p.rows, p.cols, p.eps,
                                                kDefaultPrecisionBits);
  std::string bad;
  for (int64_t j = 0; j < p.cols; ++j) {
    const std::string at = "[" + std::to_string(j) + "]";
    if (!test::same(fast_columns.dgamma[j].f, slow.dgamma[j].f) || !test::same(fast_columns.dgamma[j].d, slow.dgamma[j].d))
      bad += " dgamma" + at;
    if (!test::same(fast_columns.dbeta[j].f, slow.dbeta[j].f) || !test::same(fast_columns.dbeta[j].d, slow.dbeta[j].d))
      bad += " dbeta" + at;
    if (!test::same(fast_columns.sum_abs_dy_xhat[j], slow.sum_abs_dy_xhat[j])) bad += " sum|dy xhat|" + at;
    if (!test::same(fast_columns.sum_abs_dy[j], slow.sum_abs_dy[j])) bad += " sum|dy|" + at;
  }
  if (!bad.empty())
    t.mismatch(std::string(p.layer ? "LayerNorm " : "RMSNorm ") + p.family + ", " + std::to_string(p.rows) +
               " x " + std::to_string(p.cols) + " in " + std::to_string(parts) + " parts:" + bad);
}

std::map<std::string, Tally> run_columns(double bound_scale) {
  std::mt19937_64 rng(test::test_seed());
  std::map<std::string, Tally> by_family;
  for (const Problem& p : column_problems(rng))
    for (int parts : {1, 3}) compare_columns(p, parts, bound_scale, by_family[p.family]);
  return by_family;
}

void print(const char* what, const std::map<std::string, Tally>& by_family) {
  for (const auto& [family, t] : by_family)
    std::cout << what << " " << family << ": " << t.decided << " of " << t.rows << " decided by the fast phase\n";
}

TEST(ReferenceFastBwd, DecidedRowsMatchTheMpfrPathBitForBit) {
  const auto by_family = run_rows(1.0);
  print("rows", by_family);
  for (const auto& [family, t] : by_family) EXPECT_EQ(t.mismatches, 0) << family << ": " << t.first;
  // The comparison is as strong as the rows decided: nearly every random row
  // with eps = 1e-5, whatever dy's scale.
  for (const char* family : {"normal, dy normal", "normal, dy scaled", "normal, dy in {0, +-1}"}) {
    const Tally& t = by_family.at(family);
    EXPECT_GE(t.decided, t.rows * 9 / 10) << family;
  }
  EXPECT_GT(by_family.at("wide exponents, dy normal").decided, 0);
  EXPECT_GT(by_family.at("shifted, dy normal").decided, 0);
  // Exact ties are never decided; non-finite rows and zero dx go to MPFR.
  EXPECT_GT(by_family.at("dx midpoints").rows, 0);
  EXPECT_EQ(by_family.at("dx midpoints").decided, 0);
  for (const char* family : {"non-finite dy", "non-finite gamma", "dy zero"})
    EXPECT_EQ(by_family.at(family).decided, 0) << family;
  // Exact sums are rounded exactly, ties included (a row may still go to
  // MPFR for its dx).
  EXPECT_GT(by_family.at("sum|g| a double midpoint").decided, 0);
}

TEST(ReferenceFastBwd, DecidedColumnSumsMatchTheMpfrPathBitForBit) {
  const auto by_family = run_columns(1.0);
  print("columns", by_family);
  for (const auto& [family, t] : by_family) EXPECT_EQ(t.mismatches, 0) << family << ": " << t.first;
  for (const char* family : {"normal", "many rows", "scaled", "shifted", "a zero dy column"}) {
    const Tally& t = by_family.at(family);
    EXPECT_EQ(t.decided, t.rows) << family;
  }
  EXPECT_GT(by_family.at("a constant row").decided, 0);
  EXPECT_EQ(by_family.at("exact midpoint sums").decided, by_family.at("exact midpoint sums").rows);  // LayerNorm's: the fast phase has its c
  EXPECT_GT(by_family.at("dgamma midpoints").rows, 0);
  EXPECT_EQ(by_family.at("dgamma midpoints").decided, 0);
  for (const char* family : {"a non-finite dy", "a row the fast phase leaves", "cancelling rows"})
    EXPECT_EQ(by_family.at(family).decided, 0) << family;
}

// Negative control: without its error allowances the fast phase decides the
// exact double midpoints from the double-double value's side of them, and
// the comparisons catch the wrong roundings.
TEST(ReferenceFastBwdNegative, DroppedErrorBoundIsCaught) {
  const auto rows = run_rows(0.0);
  const auto columns = run_columns(0.0);
  EXPECT_GT(rows.at("dx midpoints").mismatches, 0) << "decided " << rows.at("dx midpoints").decided;
  EXPECT_GT(columns.at("dgamma midpoints").mismatches, 0) << "decided " << columns.at("dgamma midpoints").decided;
  std::cout << "rows: " << rows.at("dx midpoints").first << "\ncolumns: " << columns.at("dgamma midpoints").first << "\n";
}

}  // namespace
}  // namespace normcheck
