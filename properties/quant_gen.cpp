// The inputs of a forward whose y is quantized (op_spec.h, Quantization):
// a static scale, and rows that go where a cast breaks (generators.h,
// draw_quantized). The estimates of y here are double arithmetic on the
// floats, a guide for where to put the scale and the weights, never a
// reference: evaluate() judges whatever lands.
#include <algorithm>
#include <cmath>
#include <random>

#include "generators.h"
#include "normcheck/float_format.h"

namespace normcheck::props {
namespace {

// y of row r in double, NaN where an input is not finite.
std::vector<double> estimate_y(const GenOptions& o, const Problem& p, int64_t r) {
  const auto d = static_cast<std::size_t>(p.cols), base = static_cast<std::size_t>(r) * d;
  std::vector<double> s(d), y(d, NAN);
  for (std::size_t j = 0; j < d; ++j) s[j] = p.x[base + j] + (p.residual.empty() ? 0.0 : p.residual[base + j]);
  double mean = 0, var = 0;
  const bool layer = o.op == Op::layernorm_fwd;
  for (double v : s) mean += v / static_cast<double>(d);
  if (!layer) mean = 0;
  for (double v : s) var += (v - mean) * (v - mean) / static_cast<double>(d);
  const double rr = 1 / std::sqrt(var + p.eps);
  if (!std::isfinite(rr)) return y;
  for (std::size_t j = 0; j < d; ++j) {
    const double g = p.gamma.empty() ? (o.weight == Weight::one_plus_gamma ? 0.0 : 1.0) : p.gamma[j];
    const double w = o.weight == Weight::none ? 1 : o.weight == Weight::one_plus_gamma ? 1 + g : g;
    y[j] = (s[j] - mean) * rr * w + (p.beta.empty() ? 0.0 : p.beta[j]);
  }
  return y;
}

double absmax(const std::vector<double>& y) {
  double a = 0;
  for (double v : y)
    if (std::isfinite(v)) a = std::max(a, std::fabs(v));
  return a;
}

// The weight gamma_j that moves row 0's y_j to `target` (xhat_j, beta_j as they are).
void aim(const GenOptions& o, Problem& p, const std::vector<double>& y, std::size_t j, double target) {
  const double g = p.gamma[j];
  const double w = o.weight == Weight::one_plus_gamma ? 1 + g : g;
  const double beta = p.beta.empty() ? 0.0 : p.beta[j];
  const double xhat = w != 0 ? (y[j] - beta) / w : 0;
  if (xhat == 0 || !std::isfinite(xhat)) return;
  const double wanted = (target - beta) / xhat;
  const float next = static_cast<float>(o.weight == Weight::one_plus_gamma ? wanted - 1 : wanted);
  if (std::isfinite(next)) p.gamma[j] = next;
}

}  // namespace

void draw_quantized(const GenOptions& o, Rng& rng, Problem& p) {
  const Quantization& q = *o.quant;
  const double qmax = quant_max(q.cast.format);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto pow2 = [&](double lo, double hi) { return std::exp2(lo + (hi - lo) * unit(rng)); };
  double all = 0;
  for (int64_t r = 0; r < p.rows; ++r) all = std::max(all, absmax(estimate_y(o, p, r)));
  const uint64_t family = rng() % 5;
  const bool weights = o.affine && o.weight != Weight::none && p.cols > 1;
  if (weights && p.gamma.empty()) p.gamma.assign(static_cast<std::size_t>(p.cols), o.weight == Weight::one_plus_gamma ? 0.0f : 1.0f);

  // The static scale: the tensor's absolute maximum over qmax, off by up to
  // 2^0.5 either way; at the saturation edge (family 2) 2^-1.5 .. 2^0.05
  // of it, so that some |t| pass qmax and some land just inside. One in four
  // is rounded to a power of two: its inverse is exact, and a 16-bit y over
  // it lands on int8's ties (a bf16 y in [64, 128) s is a multiple of s / 2).
  if (!q.dynamic()) {
    const double base = all > 0 && std::isfinite(all) ? all / qmax : 1;
    double s = base * (family == 2 ? pow2(-1.5, 0.05) : pow2(-0.5, 0.5));
    if (rng() % 4 == 0) s = std::exp2(std::round(std::log2(s)));
    p.scale = std::isfinite(s) && s > 0 && static_cast<float>(s) > 0 ? static_cast<float>(s) : 1.0f;
    // scale_apply=multiply: the given scale is the factor y is multiplied by,
    // qmax over the absolute maximum (TransformerEngine's `scale`)
    if (q.apply == ScaleApply::multiply) {
      const auto factor = static_cast<float>(1.0 / p.scale);
      p.scale = std::isfinite(factor) ? factor : 1.0f;
    }
  }
  const std::vector<double> y = estimate_y(o, p, 0);
  const double a = absmax(y);
  if (!(a > 0) || !std::isfinite(a)) return;
  const auto top = static_cast<std::size_t>(std::max_element(y.begin(), y.end(), [](double u, double v) {
                     return std::isfinite(v) && (!std::isfinite(u) || std::fabs(u) < std::fabs(v));
                   }) - y.begin());
  // what y is divided by on its way to t (multiply: by the factor's reciprocal)
  const double s = q.dynamic()                         ? std::max(a / qmax, static_cast<double>(q.scale_min))
                   : q.apply == ScaleApply::multiply ? 1.0 / p.scale
                                                     : p.scale;

  if (family == 1 && weights) {
    // Rounding boundaries: every y_j of row 0 but the largest (which sets a
    // dynamic scale) moved to the midpoint between the two codes around its
    // t_j = y_j / s, or a few float ulps beside it. The weight is a float:
    // the t reached lies within a float rounding of the midpoint, where the
    // rounding of y to a 16-bit dtype, an inexact 1 / s or a division for a
    // multiplication move the code.
    for (std::size_t j = 0; j < y.size(); ++j) {
      if (j == top || !std::isfinite(y[j]) || rng() % 4 == 0) continue;
      const double t = y[j] / s;
      const double nearest = quant_cast({q.cast.format, true, false, false}, t);
      const double step = quant_spacing(q.cast.format, t);
      const double lo = nearest <= t ? nearest : nearest - step;
      const double mid = lo + step / 2;
      const double nudge = std::ldexp(static_cast<double>(static_cast<int>(rng() % 5) - 2), -23) * mid;
      aim(o, p, y, j, (mid + nudge) * s);
    }
  } else if (family == 3 && weights && q.dynamic()) {
    // The scale's clamps: the row's maximum above scale_ub, or its scale
    // below scale_min, by scaling every weight.
    double f = 1;
    if (std::isfinite(q.scale_ub) && (q.scale_min == 0 || rng() % 2)) f = q.scale_ub * pow2(0, 2) / a;
    else if (q.scale_min > 0) f = q.scale_min * qmax * pow2(-3, 0) / a;
    for (float& g : p.gamma) {
      const float next = static_cast<float>(o.weight == Weight::one_plus_gamma ? (1 + g) * f - 1 : g * f);
      if (std::isfinite(next)) g = next;
    }
  } else if (family == 4 && p.cols > 1) {
    // A tied absolute maximum: another column of row 0 copies the largest
    // one's input and weight (RMSNorm: with either sign).
    const std::size_t k = (top + 1 + rng() % static_cast<std::size_t>(p.cols - 1)) % static_cast<std::size_t>(p.cols);
    const bool flip = o.op == Op::rmsnorm_fwd && p.beta.empty() && rng() % 2;
    p.x[k] = flip ? -p.x[top] : p.x[top];
    if (!p.residual.empty()) p.residual[k] = flip ? -p.residual[top] : p.residual[top];
    if (!p.gamma.empty()) p.gamma[k] = p.gamma[top];
    if (!p.beta.empty()) p.beta[k] = p.beta[top];
  }
}

}  // namespace normcheck::props
