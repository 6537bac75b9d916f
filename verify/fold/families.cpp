#include "families.h"

#include <cmath>

#include "normcheck/reference.h"
#include "round.h"

namespace normcheck::fold {

std::string_view to_string(Family f) {
  switch (f) {
    case Family::random: return "random";
    case Family::gamma_wide: return "gamma_wide";
    case Family::gamma_near_zero: return "gamma_near_zero";
    case Family::near_overflow: return "near_overflow";
    case Family::subnormal: return "subnormal";
  }
  return "?";
}

namespace {

double signed_pow2(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> e(lo, hi);
  std::bernoulli_distribution sign(0.5);
  const double v = std::exp2(e(rng));
  return sign(rng) ? -v : v;
}

}  // namespace

FoldCase make_case(Family family, NormKind norm, DType storage, long d, long e, std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0, 1);
  const FloatFormat fmt = float_format(storage);
  auto st = [storage](double v) { return round_to_storage(storage, v); };
  FoldCase c;
  c.storage = storage;
  c.gamma.resize(d);
  if (norm == NormKind::layer) c.beta.resize(d);
  c.original.w.resize(e, d);
  c.original.b.resize(e);
  for (long j = 0; j < d; ++j) {
    double g = 0, be = 0.2 * n01(rng);
    switch (family) {
      case Family::random: g = 1 + 0.2 * n01(rng); break;
      case Family::gamma_wide: {
        const double k = storage == DType::f16 ? 7 : 20;
        g = signed_pow2(rng, -k, k);
        break;
      }
      case Family::gamma_near_zero:
        g = j % 4 == 0 ? 0.0 : signed_pow2(rng, storage == DType::f16 ? -24 : -40, storage == DType::f16 ? -18 : -20);
        be = n01(rng);
        break;
      case Family::near_overflow: g = signed_pow2(rng, 7, 8.25); break;
      case Family::subnormal: g = signed_pow2(rng, (fmt.min_exp - fmt.precision / 2) / 2.0 - 0.5,
                                              (fmt.min_exp - fmt.precision / 2) / 2.0 + 0.5); break;
    }
    c.gamma(j) = st(g);
    if (norm == NormKind::layer) c.beta(j) = st(be);
  }
  for (long i = 0; i < e; ++i)
    for (long j = 0; j < d; ++j) {
      double w = n01(rng) / std::sqrt(static_cast<double>(d));
      if (family == Family::near_overflow) w = signed_pow2(rng, 7, 8.25);
      if (family == Family::subnormal)
        w = signed_pow2(rng, (fmt.min_exp - fmt.precision / 2) / 2.0 - 0.5, (fmt.min_exp - fmt.precision / 2) / 2.0 + 0.5);
      c.original.w(i, j) = st(w);
    }
  for (long i = 0; i < e; ++i) {
    double b = 0.1 * n01(rng);
    if (family == Family::gamma_near_zero && norm == NormKind::layer) {
      // b ~ -(W beta) up to a small remainder: W beta + b cancels.
      double wb = 0;
      for (long j = 0; j < d; ++j) wb += c.original.w(i, j) * c.beta(j);
      b = -wb + 1e-3 * n01(rng);
    }
    if (family == Family::subnormal) b = 0;
    c.original.b(i) = st(b);
  }
  c.folded = fold_affine(c.original, c.gamma, c.beta, storage);
  return c;
}

std::vector<float> normalize(NormKind norm, const std::vector<float>& x, float eps) {
  const int64_t d = static_cast<int64_t>(x.size());
  if (norm == NormKind::layer) return reference_layernorm_fwd(x, {}, {}, 1, d, eps).xhat.rounded;
  return reference_rmsnorm_fwd(x, {}, 1, d, eps).xhat.rounded;
}

std::vector<std::vector<float>> make_xhat_rows(NormKind norm, const Matrix& weights, long rows,
                                               std::mt19937_64& rng) {
  const long d = weights.cols();
  std::normal_distribution<double> n01(0, 1);
  std::vector<std::vector<float>> out;
  for (long r = 0; r < rows; ++r) {
    std::vector<double> x(d);
    switch (r % 4) {
      case 0:
        for (auto& v : x) v = n01(rng);
        break;
      case 1: x[static_cast<std::size_t>(r / 4) % d] = 1; break;
      case 2:
        for (long j = 0; j < d; ++j) x[j] = std::isfinite(weights(0, j)) && weights(0, j) < 0 ? -1 : 1;
        x[0] += 0.5;  // not a constant row (LayerNorm of a constant row is 0)
        break;
      case 3: {
        // Gaussian x minus its projection on the first output's weights (and,
        // for LayerNorm, on 1): the first output of the exact result is ~0.
        for (auto& v : x) v = n01(rng);
        Eigen::VectorXd w = weights.row(0).transpose();
        if (!w.allFinite()) break;
        if (norm == NormKind::layer) w.array() -= w.mean();
        const double ww = w.squaredNorm();
        if (ww == 0) break;
        const Eigen::Map<Eigen::VectorXd> xv(x.data(), d);
        Eigen::VectorXd p = xv - (xv.dot(w) / ww) * w;
        for (long j = 0; j < d; ++j) x[j] = p(j);
        break;
      }
    }
    out.push_back(normalize(norm, std::vector<float>(x.begin(), x.end()), 1e-5f));
  }
  return out;
}

}  // namespace normcheck::fold
