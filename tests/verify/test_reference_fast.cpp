// Differential test of the forward references' fast phase
// (verify/reference_fast.cpp) against the MPFR path (mp::NormRow, which the
// other tests here hold to exact rationals): on every row the fast phase
// decides, every output (mean, rstd/rrms, xhat, y, variance, mean|x|, max|x|,
// eps share; float and double) must be bit for bit the MPFR path's. Rows:
// random ones of many lengths, scales and eps, and adversarial ones (huge
// |mean|/sigma, subnormals, near FLT_MAX, rows spanning more exponents than
// int64 holds, eps dominating, integer rows with dyadic outputs, y cancelling,
// outputs on or next to float and double rounding midpoints, zeros, NaN and
// inf), LayerNorm and RMSNorm, with and without gamma/beta. Seeded
// (NORMCHECK_SEED, printed).
//
// How it fails: a fast output that is not the correct rounding (a bound that
// misses an error term, a wrong decision near a midpoint, a wrong sign of
// zero, a NaN row decided). The negative control runs the same comparison
// with every error allowance dropped (bound_scale = 0) and requires it to
// find wrong outputs, on the rows whose exact y is a double midpoint.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "normcheck/reference.h"
#include "reference_fast.h"
#include "reference_mp.h"
#include "fast_rows.h"
#include "test_seed.h"

namespace normcheck {
namespace {

struct Tally {
  int rows = 0, decided = 0, mismatches = 0;
  std::string first;  // the first mismatch
};

// Compares the fast phase with the MPFR path on one row; a mismatch is
// recorded in `t` (and is what the positive test forbids).
void compare(bool layer, const test::FastCase& c, double bound_scale, Tally& t) {
  ++t.rows;
  fast::ForwardRow f;
  if (!fast::forward_row(layer, c.x, c.gamma, c.beta, c.eps, f, bound_scale)) return;
  ++t.decided;
  mp::NormRow slow(layer ? mp::Norm::layer : mp::Norm::rms, kDefaultPrecisionBits);
  slow.forward(c.x, c.gamma, c.beta, c.eps);
  std::string bad;
  auto check = [&](const char* what, auto a, auto b) {
    if (!test::same(a, b)) bad += std::string(" ") + what;
  };
  check("mean.f", f.mean.f, slow.mean.f);
  check("mean.d", f.mean.d, slow.mean.d);
  check("r.f", f.r.f, slow.r.f);
  check("r.d", f.r.d, slow.r.d);
  check("variance", f.variance, slow.variance);
  check("mean_abs_x", f.mean_abs_x, slow.mean_abs_x);
  check("max_abs_x", f.max_abs_x, slow.max_abs_x);
  check("eps_share", f.eps_share, slow.eps_share);
  if (f.finite != slow.finite || f.d() != slow.d()) bad += " finite/d";
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    if (!test::same(f.xhat[i].f, slow.xhat[i].f) || !test::same(f.xhat[i].d, slow.xhat[i].d)) bad += " xhat" + at;
    if (!test::same(f.y[i].f, slow.y[i].f) || !test::same(f.y[i].d, slow.y[i].d)) bad += " y" + at;
  }
  if (bad.empty()) return;
  ++t.mismatches;
  if (t.first.empty())
    t.first = std::string(layer ? "LayerNorm" : "RMSNorm") + " " + c.family + ", d = " +
              std::to_string(c.x.size()) + ", eps " + std::to_string(c.eps) + ":" + bad;
}

std::map<std::string, Tally> run_all(double bound_scale) {
  std::mt19937_64 rng(test::test_seed());
  std::map<std::string, Tally> by_family;
  for (const test::FastCase& c : test::fast_cases(rng))
    for (bool layer : {true, false}) {
      if (!(layer ? c.layer : c.rms)) continue;
      const std::string key = c.family.substr(0, c.family.find(':'));
      compare(layer, c, bound_scale, by_family[key]);
    }
  return by_family;
}

TEST(ReferenceFast, DecidedRowsMatchTheMpfrPathBitForBit) {
  const auto by_family = run_all(1.0);
  for (const auto& [family, t] : by_family) {
    std::cout << family << ": " << t.decided << " of " << t.rows << " rows decided by the fast phase\n";
    EXPECT_EQ(t.mismatches, 0) << family << ": " << t.first;
  }
  // The comparison is only as strong as the rows the fast phase decides: on
  // random rows of d >= 2 with eps = 1e-5 it must take nearly all (d = 1 has
  // xhat = 0, which it leaves to MPFR; eps 0 with d = 2 makes y = +-gamma +
  // beta, often a float midpoint; eps = 2^100 with d a power of two makes
  // xhat a hair off a short dyadic, so gamma xhat a hair off a double
  // midpoint: those go to MPFR by design), and the 128-bit path must be
  // exercised.
  const Tally& normal = by_family.at("normal");
  EXPECT_GE(normal.decided, normal.rows * 9 / 10);
  EXPECT_GT(by_family.at("wide exponents").decided, 0);
  EXPECT_GT(by_family.at("shifted").decided, 0);
  EXPECT_GT(by_family.at("y cancels").decided, 0);
  // Exact ties are never decided by the fast phase.
  EXPECT_EQ(by_family.at("double midpoints, beta = 1").decided, 0);
  EXPECT_EQ(by_family.at("double midpoints, y ~ gamma xhat").decided, 0);
  EXPECT_GT(by_family.at("double midpoints, y ~ gamma xhat").rows, 0);
  // Non-finite inputs always go to MPFR.
  for (const char* f : {"inf in x", "nan in x", "inf gamma", "nan beta"}) EXPECT_EQ(by_family.at(f).decided, 0) << f;
}

// Negative control: without its error allowances the fast phase decides the
// exact double midpoints from the double-double value's side of them, and
// the comparison catches the wrong roundings.
TEST(ReferenceFastNegative, DroppedErrorBoundIsCaught) {
  const auto by_family = run_all(0.0);
  int mismatches = 0;
  for (const auto& [family, t] : by_family) {
    if (t.mismatches) std::cout << family << ": " << t.mismatches << " wrong rows, first:" << t.first << "\n";
    mismatches += t.mismatches;
  }
  EXPECT_GT(by_family.at("double midpoints, y ~ gamma xhat").mismatches, 0);
  EXPECT_GT(mismatches, 0);
}

}  // namespace
}  // namespace normcheck
