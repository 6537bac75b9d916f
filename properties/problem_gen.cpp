// Whole problems (rows x d, eps, gamma/beta, dy, misalignment) for a kernel.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "generators.h"

namespace normcheck::props {
namespace {

// gamma, beta and dy stay within 2^16 in magnitude: with |xhat| <= sqrt(d) <= 2^8,
// y, the products gamma*dy*xhat and their sums over d <= 2^16 terms stay below
// 2^56, so no correct kernel overflows on them; only x probes the float range.
constexpr double kAffineMax = 0x1p16;

constexpr float kEpsChoices[] = {0.0f, 1e-12f, 1e-6f, 1e-5f, 1e-2f};

// d values that are not a multiple of any SIMD width (4, 8, 16 floats).
constexpr int64_t kOddWidths[] = {5,   7,    9,    15,   17,   23,    31,    33,    47,
                                  63,  65,   127,  129,  255,  257,   511,   513,   1023,
                                  1025, 4095, 4097, 16383, 16385, 65535};

int64_t draw_d(Rng& rng, int64_t cap) {
  switch (rng() % 20) {
    case 0: case 1: case 2: case 3:
      return std::min<int64_t>(cap, 1 + static_cast<int64_t>(rng() % 3));
    case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11:
      return std::min<int64_t>(cap, 4 + static_cast<int64_t>(rng() % 37));
    case 12: case 13: case 14: case 15: case 16: {
      std::vector<int64_t> fit;
      for (int64_t w : kOddWidths)
        if (w <= cap) fit.push_back(w);
      return fit.empty() ? cap : fit[rng() % fit.size()];
    }
    default: {  // log-uniform up to the cap
      const double hi = std::log2(static_cast<double>(cap));
      const double e = std::uniform_real_distribution<double>(0.0, hi)(rng);
      return std::clamp<int64_t>(static_cast<int64_t>(std::exp2(e)), 1, cap);
    }
  }
}

// gamma (or beta when `centre` is 0): ones/zeros, near centre, or a wide
// dynamic range with zeros and negative values.
std::vector<float> draw_affine(Rng& rng, int64_t d, float centre) {
  std::vector<float> v(static_cast<size_t>(d), centre);
  switch (rng() % 3) {
    case 0: return v;
    case 1:
      for (auto& g : v) g = static_cast<float>(centre + 0.1 * std::normal_distribution<double>()(rng));
      return v;
    default:
      for (auto& g : v) {
        const uint64_t pick = rng() % 10;
        const double magnitude = std::ldexp(1.0, static_cast<int>(rng() % 37) - 20);  // 2^-20 .. 2^16
        g = pick == 0 ? 0.0f : static_cast<float>(pick < 4 ? -magnitude : magnitude);
      }
      return v;
  }
}

void make_nonconstant(std::vector<float>& row, double max_abs) {
  if (row.size() < 2 || std::any_of(row.begin(), row.end(), [&](float v) { return v != row[0]; }))
    return;
  float up = std::nextafter(row[0], INFINITY);
  if (!(std::fabs(static_cast<double>(up)) <= max_abs)) up = std::nextafter(row[0], -INFINITY);
  row[0] = up;
}

void inject_nonfinite(Rng& rng, float* row, int64_t d) {
  static constexpr float kSpecials[] = {NAN, INFINITY, -INFINITY};
  const int64_t count = 1 + static_cast<int64_t>(rng() % 2);
  for (int64_t k = 0; k < count; ++k) row[rng() % d] = kSpecials[rng() % 3];
}

Problem draw_problem(const GenOptions& opts, Rng& rng, int size) {
  Problem p;
  p.rows = (rng() % 10 < 7) ? 1 : 2 + static_cast<int64_t>(rng() % std::max(1, opts.max_rows - 1));
  p.rows = std::min<int64_t>(p.rows, opts.max_rows);
  // RapidCheck's size 0..100 caps d at 2^(size/6): 2^16 = 65536 only near the end.
  const int64_t cap = std::clamp<int64_t>(static_cast<int64_t>(std::exp2(size / 6.0)), 3, opts.max_d);
  p.cols = draw_d(rng, cap);
  if (opts.nonconstant) p.cols = std::max<int64_t>(p.cols, 2);
  p.eps = opts.eps ? *opts.eps : kEpsChoices[rng() % 5];
  p.misalign_floats = (rng() & 1) ? 0 : 1 + static_cast<int>(rng() % 15);

  const double limit = max_abs_x(opts.range, p.cols);
  const bool nonfinite = opts.nonfinite && opts.range.handles_nonfinite;
  const bool backward = opts.op == Op::layernorm_bwd || opts.op == Op::rmsnorm_bwd;
  for (int64_t r = 0; r < p.rows; ++r) {
    RowFamily family;
    do family = static_cast<RowFamily>(rng() % kRowFamilyCount);
    while (opts.nonconstant && family == RowFamily::constant);
    auto row = draw_row(family, p.cols, limit, rng);
    if (opts.nonconstant) make_nonconstant(row, limit);
    p.x.insert(p.x.end(), row.begin(), row.end());
    if (nonfinite && rng() % 8 == 0) inject_nonfinite(rng, p.x.data() + r * p.cols, p.cols);
    if (backward) {
      auto dy = draw_row(static_cast<RowFamily>(rng() % kRowFamilyCount), p.cols, kAffineMax, rng);
      p.dy.insert(p.dy.end(), dy.begin(), dy.end());
      if (nonfinite && rng() % 16 == 0) inject_nonfinite(rng, p.dy.data() + r * p.cols, p.cols);
    }
  }
  if (opts.force_nonfinite) {
    const int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(p.rows));
    inject_nonfinite(rng, p.x.data() + r * p.cols, p.cols);
  }
  if (!opts.unit_gamma && opts.affine && rng() % 4 != 0) {
    p.gamma = draw_affine(rng, p.cols, 1.0f);
    if (opts.op == Op::layernorm_fwd && rng() % 3 != 0) p.beta = draw_affine(rng, p.cols, 0.0f);
  }
  return p;
}

}  // namespace

rc::Gen<Problem> gen_problem(const GenOptions& opts) {
  return rc::Gen<Problem>([opts](const rc::Random& random, int size) {
    rc::Random local = random;
    Rng rng(local.next());
    return rc::shrinkable::shrinkRecur(draw_problem(opts, rng, size), &shrink_problem);
  });
}

}  // namespace normcheck::props
