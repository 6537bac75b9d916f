// F3: LN(x) = RMSNorm(x M), M = I - 11^T/d, so a Pre-LN model's LayerNorms
// become RMSNorms once every writer of the residual stream is centred.
//
// Exact statement. With c = x M = x - mean(x) 1: mean(c) = 0 and
// mean(c^2) = sigma^2(x), so RMSNorm(c; eps) = c / sqrt(sigma^2 + eps) = LN(x; eps):
// the same eps, no scale, when RMSNorm divides by the root MEAN square. In the
// unit-norm convention (c / ||c||, as SliceGPT writes it), ||c||^2 = d sigma^2,
// so LN(x; eps) = sqrt(d) c / sqrt(||c||^2 + d eps): the sqrt(d) goes into the
// next Linear (or gamma) and eps must be scaled by d; keeping eps unscaled
// changes the result by (d - 1) eps / (2 d sigma^2) relative (first order).
// The stream: h = sum of writers' outputs, each o -> o M (Linear W_o -> M W_o,
// b_o -> M b_o, embedding rows E -> E M) gives h M, and LN(h) = LN(h M) =
// RMSNorm(h M): every LN reading the stream becomes an RMSNorm, the model's
// outputs unchanged (in Pre-LN the stream is read only through norms).
// Checked at 100 digits; in float the centred writers are rounded once to
// their storage, and what that leaves of mean(h M) is measured.
#include <cmath>
#include <random>

#include "claim_format.h"
#include "exact_tensor.h"
#include "fold/fold.h"
#include "fold/round.h"
#include "fold_exact.h"
#include "normcheck/claims.h"

namespace normcheck {
namespace {

// max |LN(h) - RMSNorm(h')| over max |LN(h)| in double, h from an embedding row
// and a sublayer output with float32/bf16/f16 weights, h' from the centred and
// rounded writers.
double stored_centring_error(DType t, uint64_t seed) {
  namespace nf = fold;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0, 1);
  const long d = 256, k = 64;
  nf::Linear out{nf::Matrix(d, k), nf::Vector(d)}, embed{nf::Matrix(8, d), nf::Vector()};
  for (long i = 0; i < out.w.size(); ++i) out.w.data()[i] = nf::round_to_storage(t, 0.2 + n01(rng) / 8);
  for (long i = 0; i < d; ++i) out.b(i) = nf::round_to_storage(t, 1 + n01(rng));
  for (long i = 0; i < embed.w.size(); ++i) embed.w.data()[i] = nf::round_to_storage(t, 2 + n01(rng));
  const nf::Linear co = nf::centre_writer(out, nf::Axis::rows, t);
  const nf::Linear ce = nf::centre_writer(embed, nf::Axis::columns, t);
  double worst = 0;
  for (long token = 0; token < 8; ++token) {
    Eigen::VectorXd a(k);
    for (long i = 0; i < k; ++i) a(i) = n01(rng);
    const Eigen::VectorXd h = embed.w.row(token).transpose() + out.w * a + out.b;
    const Eigen::VectorXd hc = ce.w.row(token).transpose() + co.w * a + co.b;
    const Eigen::VectorXd c = h.array() - h.mean();
    const Eigen::VectorXd ln = c / std::sqrt(c.squaredNorm() / d + 1e-5);
    const Eigen::VectorXd rms = hc / std::sqrt(hc.squaredNorm() / d + 1e-5);
    worst = std::max(worst, (ln - rms).cwiseAbs().maxCoeff() / ln.cwiseAbs().maxCoeff());
  }
  return worst;
}

}  // namespace

ClaimResult check_f3_layernorm_as_rmsnorm(const ClaimOptions& options) {
  using claims_text::fmt;
  ClaimResult result;
  const int d = options.full ? 96 : 24, rows = options.full ? 16 : 6;  // not powers of 2: 1/d rounds
  Series eps_effect{"LN vs unit-norm form with eps unscaled: measured and (d-1) eps / (2 d sigma^2)", "sigma",
                    "relative difference", true, true, {}, {}};
  Series predicted{"first-order prediction (d-1) eps / (2 d sigma^2)", "sigma", "relative difference", true, true, {}, {}};
  double exact = 0, stream = 0, control = 1e300, scaled_eps = 0;
  std::string eps_detail;
  for (double sigma : {1.0, 1e-1, 1e-2, 1e-3}) {
    const auto c = claims_fold::exact_centring(d, rows, sigma, 1e-5, options.seed);
    exact = std::max(exact, c.ln_vs_rms_of_centred);
    stream = std::max(stream, c.stream);
    control = std::min(control, c.uncentred_control);
    scaled_eps = std::max(scaled_eps, c.unit_norm_d_eps);
    eps_effect.x.push_back(sigma);
    eps_effect.y.push_back(c.unit_norm_same_eps);
    predicted.x.push_back(sigma);
    predicted.y.push_back(c.predicted_same_eps);
    eps_detail += fmt("sigma %.0e: %.3e (predicted %.3e); ", sigma, c.unit_norm_same_eps, c.predicted_same_eps);
  }
  result.series = {eps_effect, predicted};
  const double stored[3] = {stored_centring_error(DType::f32, options.seed),
                            stored_centring_error(DType::bf16, options.seed),
                            stored_centring_error(DType::f16, options.seed)};
  const bool controls_caught = control > claims::kExactTolerance;
  const bool holds = exact < claims::kExactTolerance && stream < claims::kExactTolerance &&
                     scaled_eps < claims::kExactTolerance;
  result.verdict = !controls_caught ? Verdict::unchecked : holds ? Verdict::holds : Verdict::refuted;
  result.figure = fmt(
      "LN(x; eps) vs RMSNorm(xM; same eps): %.1e; Pre-LN stream with centred writers, LN -> RMSNorm: %.1e; "
      "unit-norm form sqrt(d) xM/sqrt(||xM||^2 + d eps): %.1e, with eps unscaled: up to %.2e at sigma 1e-3 "
      "(d = %d, eps 1e-5); centred writers rounded to float32/bf16/f16: %.1e/%.1e/%.1e; control RMSNorm(x) "
      "without centring: %.2g",
      exact, stream, scaled_eps, eps_effect.y.back(), d, stored[0], stored[1], stored[2], control);
  result.explanation = fmt(
      "100 digits: %d rows of x = 3 + sigma N(0, 1) per sigma in {1, 0.1, 0.01, 0.001}, d = %d, eps = 1e-5; "
      "LN(x) against RMSNorm(x - mean) (root-mean-square convention: the same eps, no scale), against the "
      "unit-norm convention with sqrt(d) and d eps (exact) and with eps unscaled (%s); a Pre-LN stream (an "
      "embedding and a sublayer output projection writing it, a consumer Linear reading LN(h; gamma, beta)) "
      "with writers centred and gamma/beta folded into the consumer, whose outputs must not change. Float: "
      "the centred writers rounded once to storage (d = 256): LN(h) vs RMSNorm(h'), relative, in double; "
      "the rounding leaves mean(h') ~ u_s |h| instead of 0. Seed %llu.",
      rows, d, eps_detail.c_str(), static_cast<unsigned long long>(options.seed));
  return result;
}

}  // namespace normcheck
