// Whole problems (rows x d, eps, gamma/beta, dy, misalignment) for a kernel.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <span>
#include <tuple>

#include "generators.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_scale.h"
#include "normcheck/row_terms.h"

namespace normcheck::props {
namespace {

// gamma, beta and dy stay within 2^16 in magnitude: with |xhat| <= sqrt(d) <= 2^8,
// y, the products gamma*dy*xhat and their sums over d <= 2^16 terms stay below
// 2^56, so no correct kernel overflows on them; only x probes the float range.
constexpr double kAffineMax = 0x1p16;

constexpr float kEpsChoices[] = {0.0f, 1e-12f, 1e-6f, 1e-5f, 1e-2f};

// One of kEpsChoices at or above min_eps (the kernel's declared domain), or
// min_eps itself when none is: min_eps is then drawn as often as the rest.
float draw_eps(Rng& rng, float min_eps) {
  std::vector<float> fit = {};
  for (const float e : kEpsChoices)
    if (e >= min_eps) fit.push_back(e);
  if (fit.empty() || fit.front() != min_eps) fit.insert(fit.begin(), min_eps);
  return fit[rng() % fit.size()];
}

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

// A sign times 2^U(lo, hi).
float signed_pow2(Rng& rng, double lo, double hi) {
  const double v = std::exp2(std::uniform_real_distribution<double>(lo, hi)(rng));
  return static_cast<float>(rng() % 2 ? -v : v);
}

// The Linear after the norm (is_norm_linear(op)): out_features in [1, 8],
// W out_features x d and b (or none) from the folding families of
// docs/folding.md at float32, with gamma and beta drawn to match:
//   random:          W ~ N(0, 1/d), b ~ 0.1 N, gamma/beta as draw_affine draws them;
//   gamma_wide:      |gamma| = 2^U(-20, 20);
//   gamma_near_zero: |gamma| <= 2^-20 (a quarter 0), beta ~ N(0, 1), b = -fl(W beta) + 1e-3 N:
//                    W beta + b cancels (LayerNorm; RMSNorm has no beta);
//   near_overflow:   |gamma|, |W| = 2^U(7, 8.25): |W gamma| around f16's largest, 65504;
//   subnormal:       |gamma|, |W| = 2^U(-68.5, -67.5): |W gamma| in float32's subnormal range.
void draw_linear(const GenOptions& opts, Rng& rng, Problem& p) {
  std::normal_distribution<double> n01(0, 1);
  const int64_t d = p.cols;
  const bool layer = opts.op == Op::layernorm_linear_fwd;
  p.out_features = 1 + static_cast<int64_t>(rng() % 8);
  const uint64_t family = rng() % 5;
  const auto both = [&](double lo, double hi) {
    p.gamma.resize(static_cast<size_t>(d));
    for (auto& g : p.gamma) g = signed_pow2(rng, lo, hi);
  };
  if (family == 1) both(-20, 20);
  if (family == 2) {
    p.gamma.resize(static_cast<size_t>(d));
    for (size_t j = 0; j < p.gamma.size(); ++j) p.gamma[j] = j % 4 == 0 ? 0.0f : signed_pow2(rng, -40, -20);
    if (layer) {
      p.beta.resize(static_cast<size_t>(d));
      for (auto& b : p.beta) b = static_cast<float>(n01(rng));
    }
  }
  if (family == 3) both(7, 8.25);
  if (family == 4) both(-68.5, -67.5);
  p.weight.resize(static_cast<size_t>(p.out_features * d));
  for (auto& w : p.weight) {
    if (family == 3) w = signed_pow2(rng, 7, 8.25);
    else if (family == 4) w = signed_pow2(rng, -68.5, -67.5);
    else w = static_cast<float>(n01(rng) / std::sqrt(static_cast<double>(d)));
  }
  if (family == 4 || rng() % 4 == 0) return;  // no bias
  p.bias.resize(static_cast<size_t>(p.out_features));
  for (int64_t i = 0; i < p.out_features; ++i) {
    double b = 0.1 * n01(rng);
    if (family == 2 && !p.beta.empty()) {
      double wb = 0;
      for (int64_t j = 0; j < d; ++j) wb += static_cast<double>(p.weight[static_cast<size_t>(i * d + j)]) * p.beta[static_cast<size_t>(j)];
      b = -wb + 1e-3 * n01(rng);
    }
    p.bias[static_cast<size_t>(i)] = static_cast<float>(b);
  }
}

// Whether the domain has terms fit_to_domain() constructs rows for.
bool has_value_terms(const InputRange& range) { return range.min_abs_x > 0 || range.has_row_terms(); }

// x brought inside the domain's |x|>=M and row terms (kernel.h, InputRange):
// a nonzero x below M becomes 0 (zeros are inside), then a finite row outside
// a row term (row_terms.h) is replaced by c + sigma N(0,1): sigma = 2^U(-20,20)
// (at least 16 times the term's smallest sigma), |c|/sigma 0 a quarter of the
// time, else log-uniform over 1e-2 .. the term's K (at most 1e7, the
// gaussian_offset family's range), redrawn until the row is inside (a few
// tries: its rounding to float can fall either side of K). A replaced row's
// residual becomes 0, so the norm's input is the row itself. What is decided
// later (a 16-bit format's rounding, a residual's sum) is the judge's: the
// harness draws again what it declines (harness_draw.h).
void fit_to_domain(const GenOptions& opts, Rng& rng, Problem& p) {
  const InputRange& range = opts.range;
  const auto flush = [&](std::span<float> v) {
    for (float& e : v)
      if (e != 0 && std::fabs(e) < range.min_abs_x) e = 0.0f;
  };
  flush(p.x);
  if (!range.has_row_terms() || p.rows <= 0 || p.cols <= 0) return;
  const double limit = max_abs_x(range, p.cols);
  const auto inside = [&](std::span<const float> row) {
    return row_terms_reason(range, row_scales(opts.op, row, 1, p.cols, p.eps).front()).empty();
  };
  const std::vector<RowScale> scales = row_scales(opts.op, p.x, p.rows, p.cols, p.eps);
  const double max_ratio = std::min(range.max_mean_over_sigma, 1e7);
  for (int64_t r = 0; r < p.rows; ++r) {
    if (row_terms_reason(range, scales[static_cast<std::size_t>(r)]).empty()) continue;
    const std::span<float> row(p.x.data() + r * p.cols, static_cast<std::size_t>(p.cols));
    for (int attempt = 0; attempt < 8; ++attempt) {
      const double sigma =
          std::max(std::exp2(std::uniform_real_distribution<double>(-20, 20)(rng)), 16 * range.min_sigma);
      const double top = std::log10(max_ratio);
      const double ratio =
          rng() % 4 == 0 ? 0.0
                         : std::pow(10.0, std::uniform_real_distribution<double>(std::min(-2.0, top - 1), top)(rng));
      const double c = ((rng() & 1) ? -1 : 1) * ratio * sigma;
      const std::vector<float> fresh = offset_normal_row(p.cols, c, sigma, limit, rng);
      std::copy(fresh.begin(), fresh.end(), row.begin());
      flush(row);
      if (inside(row)) break;
    }
    if (!p.residual.empty()) std::fill_n(p.residual.begin() + r * p.cols, p.cols, 0.0f);
  }
}

Problem draw_problem(const GenOptions& opts, Rng& rng, int size) {
  Problem p;
  p.rows = (rng() % 10 < 7) ? 1 : 2 + static_cast<int64_t>(rng() % std::max(1, opts.max_rows - 1));
  p.rows = std::min<int64_t>(p.rows, opts.max_rows);
  // RapidCheck's size 0..100 caps d at 2^(size/6): 2^16 = 65536 only near the end.
  // A norm followed by a Linear: d <= 1024 (the Linear's reference costs out_features x d per row).
  // Inside the kernel's declared domain (InputRange): its d range and min_eps.
  const int64_t max_d = std::min(is_norm_linear(opts.op) ? std::min<int64_t>(opts.max_d, 1024) : opts.max_d,
                                 opts.range.max_d);
  const int64_t cap = std::clamp<int64_t>(static_cast<int64_t>(std::exp2(size / 6.0)), 3, max_d);
  p.cols = draw_d(rng, cap);
  // A LayerNorm row of one element has sigma = 0: below any sigma>=S.
  const bool two_columns = opts.nonconstant || (opts.range.min_sigma > 0 && centred(opts.op));
  if (two_columns) p.cols = std::max<int64_t>(p.cols, 2);
  p.cols = std::clamp(p.cols, std::min(opts.range.min_d, max_d), max_d);
  // Rows past max_d (GenOptions::long_d): few of them, since each costs the
  // reference d high-precision terms.
  const int64_t long_cap = is_norm_linear(opts.op) ? 0 : std::min(opts.long_d, opts.range.max_d);
  if (long_cap > max_d &&
      (opts.always_long || (size >= 100 && rng() % static_cast<uint64_t>(std::max(1, opts.long_one_in)) == 0))) {
    p.rows = std::min<int64_t>(opts.max_rows, 1 + static_cast<int64_t>(rng() % 2));
    const double lo = std::log2(static_cast<double>(max_d)), hi = std::log2(static_cast<double>(long_cap));
    p.cols = std::clamp<int64_t>(static_cast<int64_t>(std::exp2(std::uniform_real_distribution<double>(lo, hi)(rng))),
                                 max_d + 1, long_cap);
  }
  const bool backward = opts.op == Op::layernorm_bwd || opts.op == Op::rmsnorm_bwd;
  const bool many_rows =
      backward && opts.many_rows_one_in > 0 && rng() % static_cast<uint64_t>(opts.many_rows_one_in) == 0;
  if (many_rows) {
    const double hi = std::log2(static_cast<double>(std::max<int64_t>(opts.many_rows_max, 256)));
    p.rows = static_cast<int64_t>(std::exp2(std::uniform_real_distribution<double>(8, hi)(rng)));
    p.cols = std::clamp<int64_t>((two_columns ? 2 : 1) + static_cast<int64_t>(rng() % 64),
                                 std::min(opts.range.min_d, max_d), max_d);
  }
  // The caller's shapes, when given, replace the rows and d drawn above.
  if (!opts.shapes.empty()) std::tie(p.rows, p.cols) = opts.shapes[rng() % opts.shapes.size()];
  p.eps = opts.eps ? *opts.eps : draw_eps(rng, opts.range.min_eps);
  p.misalign_floats = (rng() & 1) ? 0 : 1 + static_cast<int>(rng() % 15);
  if (opts.row_stride && rng() % 3 == 0) p.row_stride = p.cols + 1 + static_cast<int64_t>(rng() % 17);

  const double limit = max_abs_x(opts.range, p.cols);
  const bool nonfinite = opts.nonfinite && opts.range.handles_nonfinite;
  if (many_rows) draw_batch(rng, limit, opts.residual, p);
  for (int64_t r = 0; r < p.rows && !many_rows; ++r) {
    RowFamily family;
    do family = static_cast<RowFamily>(rng() % kRowFamilyCount);
    while (opts.nonconstant && family == RowFamily::constant);
    auto row = draw_row(family, p.cols, limit, rng);
    if (opts.nonconstant) make_nonconstant(row, limit);
    p.x.insert(p.x.end(), row.begin(), row.end());
    if (nonfinite && rng() % 8 == 0) inject_nonfinite(rng, p.x.data() + r * p.cols, p.cols);
    if (opts.residual) {  // of its own family and the range's scale: the sum may cancel, or dwarf x
      auto res = draw_row(static_cast<RowFamily>(rng() % kRowFamilyCount), p.cols, limit, rng);
      p.residual.insert(p.residual.end(), res.begin(), res.end());
      if (nonfinite && rng() % 16 == 0) inject_nonfinite(rng, p.residual.data() + r * p.cols, p.cols);
    }
    if (backward) {
      auto dy = draw_row(static_cast<RowFamily>(rng() % kRowFamilyCount), p.cols, kAffineMax, rng);
      p.dy.insert(p.dy.end(), dy.begin(), dy.end());
      if (nonfinite && rng() % 16 == 0) inject_nonfinite(rng, p.dy.data() + r * p.cols, p.cols);
    }
  }
  if (has_value_terms(opts.range)) fit_to_domain(opts, rng, p);
  if (opts.force_nonfinite) {
    const int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(p.rows));
    inject_nonfinite(rng, p.x.data() + r * p.cols, p.cols);
  }
  if (!opts.unit_gamma && opts.affine && rng() % 4 != 0) {
    p.gamma = draw_affine(rng, p.cols, 1.0f);
    const bool has_beta = opts.op == Op::layernorm_fwd || opts.op == Op::layernorm_linear_fwd || opts.beta;
    if (has_beta && rng() % 3 != 0) p.beta = draw_affine(rng, p.cols, 0.0f);
  }
  // A backward under weight=1+gamma is judged with w = 1 + gamma exact in
  // float32 (evaluate/backward_spec.h): each gamma_j moves to the nearest
  // value that keeps it so, w_j - 1 for w_j = fl(1 + gamma_j).
  if (backward && opts.weight == Weight::one_plus_gamma)
    for (float& g : p.gamma) {
      const float w = 1.0f + g;
      g = static_cast<double>(static_cast<float>(static_cast<double>(w) - 1.0)) + 1.0 == static_cast<double>(w)
              ? static_cast<float>(static_cast<double>(w) - 1.0)
              : 0.0f;
    }
  if (is_norm_linear(opts.op)) {
    draw_linear(opts, rng, p);
    if (opts.unit_gamma || !opts.affine) {
      p.gamma.clear();
      p.beta.clear();
    }
  }
  if (opts.quant) draw_quantized(opts, rng, p);
  return p;
}

}  // namespace

void draw_batch(Rng& rng, double limit, bool residual, Problem& p) {
  std::normal_distribution<double> n01(0, 1);
  std::vector<double> channel_x, channel_dy;
  for (int64_t j = 0; j < p.cols; ++j) {
    channel_x.push_back(2 * n01(rng));
    channel_dy.push_back(0.5 + 0.5 * n01(rng));
  }
  const auto channel_row = [&](const std::vector<double>& mean) {
    std::normal_distribution<double> n(0, 1);
    std::vector<float> row(static_cast<std::size_t>(p.cols));
    for (std::size_t j = 0; j < row.size(); ++j)
      row[j] = static_cast<float>(std::clamp(mean[j] + n(rng), -limit, limit));
    return row;
  };
  const std::vector<double> no_mean(static_cast<std::size_t>(p.cols), 0.0);
  for (int64_t r = 0; r < p.rows; ++r) {
    const auto x = channel_row(channel_x), dy = channel_row(channel_dy);
    p.x.insert(p.x.end(), x.begin(), x.end());
    p.dy.insert(p.dy.end(), dy.begin(), dy.end());
    if (residual) {
      const auto res = channel_row(no_mean);
      p.residual.insert(p.residual.end(), res.begin(), res.end());
    }
  }
}

GenOptions kernel_options(const Kernel& kernel) {
  GenOptions opts;
  opts.op = kernel.op;
  opts.range = kernel.range;
  opts.nonfinite = kernel.range.handles_nonfinite;
  opts.residual = spec_of(kernel).add;
  opts.row_stride = kernel.takes_row_stride;
  const OpSpec spec = spec_of(kernel);
  opts.beta = spec.direction == Direction::bwd && spec.has(TensorName::beta);
  opts.quant = spec.quant;
  opts.weight = spec.weight;
  return opts;
}

rc::Gen<Problem> gen_problem(const GenOptions& opts) {
  return rc::Gen<Problem>([opts](const rc::Random& random, int size) {
    rc::Random local = random;
    Rng rng(local.next());
    return rc::shrinkable::shrinkRecur(draw_problem(opts, rng, size), &shrink_problem);
  });
}

}  // namespace normcheck::props
