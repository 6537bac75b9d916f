#include "fold_exact.h"

#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "claim_format.h"
#include "exact_tensor.h"

namespace normcheck::claims_fold {
namespace {

using Real = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<claims::kExactDigits>,
                                           boost::multiprecision::et_off>;
using Vector = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;

// Norm(x; gamma, beta) at 100 digits; gamma/beta empty for none.
Vector norm_of(fold::NormKind norm, const Vector& x, const Real& eps, const Vector& gamma, const Vector& beta) {
  const Real d = static_cast<int>(x.size());
  const Real mean = norm == fold::NormKind::layer ? Real(x.sum() / d) : Real(0);
  const Vector c = x.array() - mean;
  const Real r = 1 / sqrt(c.squaredNorm() / d + eps);
  Vector y = c * r;
  if (gamma.size()) y = y.cwiseProduct(gamma);
  if (beta.size()) y += beta;
  return y;
}

Real max_abs(const Vector& v) { return v.cwiseAbs().maxCoeff(); }

Vector random_vector(int n, double mean, double scale, std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0, 1);
  Vector v(n);
  for (int i = 0; i < n; ++i) v(i) = mean + scale * n01(rng);
  return v;
}

}  // namespace

double exact_fold_mismatch(fold::NormKind norm, int d, int rows, double gamma_log2_range, bool wrong_side,
                           uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> expo(-gamma_log2_range, gamma_log2_range);
  const int e = wrong_side ? d : d + 3;
  Vector gamma(d), beta;
  for (int j = 0; j < d; ++j) gamma(j) = std::exp2(expo(rng)) * (j % 3 == 0 ? -1 : 1);
  if (norm == fold::NormKind::layer) beta = random_vector(d, 0, 1, rng);
  Matrix w(e, d);
  for (int i = 0; i < e; ++i) w.row(i) = random_vector(d, 0, 1, rng).transpose();
  const Vector b = random_vector(e, 0, 1, rng);
  // The fold, at 100 digits.
  Matrix wf = wrong_side ? Matrix(gamma.asDiagonal() * w) : Matrix(w * gamma.asDiagonal());
  const Vector bf = beta.size() ? Vector(w * beta + b) : b;
  const Real eps("1e-5");
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    const Vector x = random_vector(d, r, 1 + r, rng);
    const Vector unfolded = w * norm_of(norm, x, eps, gamma, beta) + b;
    const Vector folded = wf * norm_of(norm, x, eps, Vector(), Vector()) + bf;
    worst = std::max(worst, static_cast<double>(max_abs(unfolded - folded) / max_abs(unfolded)));
  }
  return worst;
}

Centring exact_centring(int d, int rows, double sigma, double eps_value, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Real eps(eps_value), dd(d);
  Centring out;
  for (int r = 0; r < rows; ++r) {
    const Vector x = random_vector(d, 3, sigma, rng);
    // x M as a matrix product (not LN's own x - mean), so the two sides are
    // computed independently.
    const Matrix m = Matrix::Identity(d, d) - Matrix::Constant(d, d, Real(1) / dd);
    const Vector c = m * x;
    const Vector ln = norm_of(fold::NormKind::layer, x, eps, Vector(), Vector());
    const Real scale = max_abs(ln);
    auto rel = [&](const Vector& v) { return static_cast<double>(max_abs(ln - v) / scale); };
    out.ln_vs_rms_of_centred = std::max(out.ln_vs_rms_of_centred, rel(norm_of(fold::NormKind::rms, c, eps, Vector(), Vector())));
    out.uncentred_control = std::max(out.uncentred_control, rel(norm_of(fold::NormKind::rms, x, eps, Vector(), Vector())));
    out.unit_norm_d_eps = std::max(out.unit_norm_d_eps, rel(Vector(c * (sqrt(dd) / sqrt(c.squaredNorm() + dd * eps)))));
    out.unit_norm_same_eps = std::max(out.unit_norm_same_eps, rel(Vector(c * (sqrt(dd) / sqrt(c.squaredNorm() + eps)))));
    const double var = static_cast<double>(c.squaredNorm() / dd);
    out.predicted_same_eps = std::max(out.predicted_same_eps, (d - 1) * eps_value / (2 * d * var));
  }
  // A Pre-LN residual stream: h = E[token] + W_o a + b_o (an embedding and one
  // sublayer's output projection writing the stream), read by LN(h; gamma, beta)
  // into a consumer Linear (W, b). Centred: E M, M W_o, M b_o; the consumer
  // folded (W diag(gamma), W beta + b) after RMSNorm. Both at 100 digits.
  const int k = d / 2 + 1, e = d + 1;
  Matrix emb(5, d), wo(d, k), wc(e, d);
  for (int i = 0; i < 5; ++i) emb.row(i) = random_vector(d, 2, 1, rng).transpose();
  for (int i = 0; i < d; ++i) wo.row(i) = random_vector(k, 0.5, 1, rng).transpose();
  for (int i = 0; i < e; ++i) wc.row(i) = random_vector(d, 0, 1, rng).transpose();
  const Vector bo = random_vector(d, 1, 1, rng), bc = random_vector(e, 0, 1, rng);
  const Vector gamma = random_vector(d, 1, 0.3, rng), beta = random_vector(d, 0, 0.3, rng);
  const Matrix m = Matrix::Identity(d, d) - Matrix::Constant(d, d, Real(1) / dd);
  const Matrix emb_c = emb * m, wo_c = m * wo;
  const Vector bo_c = m * bo;
  const Matrix wc_f = wc * gamma.asDiagonal();
  const Vector bc_f = wc * beta + bc;
  for (int t = 0; t < 5; ++t) {
    const Vector a = random_vector(k, 0, 1, rng);
    const Vector h = emb.row(t).transpose() + wo * a + bo;
    const Vector hc = emb_c.row(t).transpose() + wo_c * a + bo_c;
    const Vector model = wc * norm_of(fold::NormKind::layer, h, eps, gamma, beta) + bc;
    const Vector converted = wc_f * norm_of(fold::NormKind::rms, hc, eps, Vector(), Vector()) + bc_f;
    out.stream = std::max(out.stream, static_cast<double>(max_abs(model - converted) / max_abs(model)));
  }
  return out;
}

PostLn exact_post_ln(int d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Real eps("1e-5");
  PostLn out;
  const Vector gamma = random_vector(d, 1, 0.5, rng), beta = random_vector(d, 0, 0.5, rng);
  Matrix w(d, d);
  for (int i = 0; i < d; ++i) w.row(i) = random_vector(d, 0, 1, rng).transpose();
  const Vector b = random_vector(d, 0, 1, rng);
  const Matrix wf = w * gamma.asDiagonal();
  const Vector bf = w * beta + b;
  const Vector none;
  for (int r = 0; r < 4; ++r) {
    const Vector x = random_vector(d, r, 1 + r, rng);
    // Pre-LN: x + W LN(x; gamma, beta) + b against x + W' LN(x; 1, 0) + b'.
    const Vector pre = x + w * norm_of(fold::NormKind::layer, x, eps, gamma, beta) + b;
    const Vector pre_f = x + wf * norm_of(fold::NormKind::layer, x, eps, none, none) + bf;
    out.pre_ln_fold = std::max(out.pre_ln_fold, static_cast<double>(max_abs(pre - pre_f) / max_abs(pre)));
    // Post-LN: z = LN1(x; gamma, beta) is the stream; the block is LN2(z + W z + b).
    // Folding gamma, beta into W leaves the skip connection with LN1(x; 1, 0).
    const Vector z = norm_of(fold::NormKind::layer, x, eps, gamma, beta);
    const Vector zf = norm_of(fold::NormKind::layer, x, eps, none, none);
    const Vector post = norm_of(fold::NormKind::layer, Vector(z + w * z + b), eps, none, none);
    const Vector post_f = norm_of(fold::NormKind::layer, Vector(zf + wf * zf + bf), eps, none, none);
    out.post_ln_fold = std::max(out.post_ln_fold, static_cast<double>(max_abs(post - post_f) / max_abs(post)));
  }
  // The small counterexample, eps = 0, F = 0 (W = 0, b = 0, so W' = 0, b' = 0).
  Vector x(3), g(3);
  x << 1, 0, -1;
  g << 2, 1, 1;
  const Vector model = norm_of(fold::NormKind::layer, norm_of(fold::NormKind::layer, x, Real(0), g, none), Real(0), none, none);
  const Vector folded = norm_of(fold::NormKind::layer, norm_of(fold::NormKind::layer, x, Real(0), none, none), Real(0), none, none);
  for (int i = 0; i < 3; ++i) {
    out.model.push_back(static_cast<double>(model(i)));
    out.folded.push_back(static_cast<double>(folded(i)));
  }
  return out;
}

std::vector<SweepRow> float_sweep(fold::NormKind norm, bool full, uint64_t seed) {
  std::vector<SweepRow> out;
  const long dims[] = {16, 64, 256, 1024};
  const int shapes = full ? 4 : 3, rows = full ? 16 : 8;
  uint64_t stream = 0;
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (bool act : {false, true})
    for (fold::Family f : fold::kFamilies) {
      if (act && t == DType::f32) continue;  // float32 activations are the first pass
      SweepRow row{t, act, f, {}};
      for (int s = 0; s < shapes; ++s) {
        std::mt19937_64 rng(seed + 0x9e3779b97f4a7c15ULL * ++stream);
        fold::FoldCase c = fold::make_case(f, norm, t, dims[s], 32, rng);
        c.storage_activations = act;
        const auto xs = fold::make_xhat_rows(norm, c.folded.w, rows, rng);
        fold::merge(row.check, fold::check_fold(c, xs));
      }
      out.push_back(row);
    }
  return out;
}

double wrong_side_float(fold::NormKind norm, uint64_t seed) {
  double smallest = std::numeric_limits<double>::infinity();
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    std::mt19937_64 rng(seed);
    fold::FoldCase c = fold::make_case(fold::Family::random, norm, t, 64, 64, rng);
    c.folded = fold::fold_affine_wrong_side(c.original, c.gamma, c.beta, t);
    smallest = std::min(smallest, fold::check_fold(c, fold::make_xhat_rows(norm, c.folded.w, 8, rng)).diff_over_bound);
  }
  return smallest;
}

}  // namespace normcheck::claims_fold
