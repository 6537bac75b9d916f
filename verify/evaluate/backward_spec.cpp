// What a backward spec's own words cost beyond its op's bound (backward_spec.h).
//
// Notation as in docs/accuracy_backward.md: u = 2^-24; a row's r, xhat,
// g = w dy, G = mean(g), P = mean(g xhat), M_g = mean|g|, M_gx = mean|g xhat|,
// kappa = mean|x| r, max_kappa = max|x| r; the Bound's coefficients
// (kernel.h) give
//   |dx^ - dx| <= r (dx_g |g_i| + (dx_mean_g + dx_xhat_mean_g |xhat_i|) M_g
//                    + (dx_proj_abs + dx_proj_rel |xhat_i|) M_gx) + underflow_abs,
//   |dgamma^ - dgamma| <= dgamma_rel sum|dy xhat| + dgamma_abs sum|dy| (+ underflow_abs),
//   |dbeta^ - dbeta| <= dbeta_rel sum|dy| (+ underflow_abs),
// with dx = r (g_i - G - xhat_i P) (RMSNorm: no G). Every word below changes
// one quantity the kernel computes from: it works from a perturbed value and
// is within its own bound of the gradient taken at that value. Each
// transform adds the distance between the two gradients, and grows the
// kernel's own terms by what the perturbation does to the quantities they
// scale with. A coefficient of +inf stays +inf (no promise).
#include "backward_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "normcheck/bounds.h"
#include "normcheck/float_format.h"
#include "stored_input.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU32 = 0x1p-24;

// A value computed in float32 (within u) and then rounded to format t
// (within u_t of that): relative (1 + u)(1 + u_t) - 1. A value already within
// u of the real one (the reference's float32 rounding of a statistic) rounded
// to t is within the same of it; rounding the real value straight to t can
// differ from rounding its float32 rounding, so both roundings count.
double twice_rounded(DType t) { return kU32 + unit_roundoff(t) + kU32 * unit_roundoff(t); }

double product(double coefficient, double scale) { return scale == 0 ? 0 : coefficient * scale; }

// The largest |xhat_i| of a row: |x_i - mu| r <= |x_i| r + |mu| r <= max_kappa + kappa.
double max_abs_xhat(const RowCondition& c) { return c.max_kappa + c.kappa; }

// xhat'_i = (1 + e_i) xhat_i + tau_i, |e_i| <= v, |tau_i| <= a: the kernel
// works from xhat' (a saved mean and rstd in other formats, a rounding of
// xhat). P' = mean(g xhat') is within v M_gx + a M_g of P, and
//   |xhat'_i P' - xhat_i P| <= |xhat'_i - xhat_i| |P'| + |xhat_i| |P' - P|
//     <= |xhat_i| M_gx v (2 + v) + |xhat_i| M_g (1 + v) a + (1 + v) a M_gx + a^2 M_g;
// the kernel's terms at xhat' (|xhat'_i| <= (1 + v)|xhat_i| + a,
// M_gx' <= (1 + v) M_gx + a M_g) give dx_proj_rel (1 + v)^2 on |xhat_i| M_gx,
// and a (1 + v) dx_proj_rel on |xhat_i| M_g and on M_gx, a^2 dx_proj_rel,
// a dx_proj_abs and a dx_xhat_mean_g on M_g. dgamma = sum dy xhat moves by
// v sum|dy xhat| + a sum|dy|, and its dgamma_rel term grows by (1 + v) and
// a dgamma_rel sum|dy|.
void xhat_perturbed(Bound& b, double v, double a) {
  const double s = (1 + v) * (1 + v);
  const Bound k = b;
  b.dx_g = s * k.dx_g;
  b.dx_mean_g = s * k.dx_mean_g + product(1 + k.dx_proj_rel, a * a) + product(k.dx_proj_abs + k.dx_xhat_mean_g, a);
  b.dx_xhat_mean_g = s * k.dx_xhat_mean_g + product(1 + k.dx_proj_rel, (1 + v) * a);
  b.dx_proj_abs = s * k.dx_proj_abs + product(1 + k.dx_proj_rel, (1 + v) * a);
  b.dx_proj_rel = s * k.dx_proj_rel + v * (2 + v);
  b.dgamma_rel = (1 + v) * k.dgamma_rel + v;
  b.dgamma_abs = k.dgamma_abs + product(1 + k.dgamma_rel, a);
}

// The final factor r' = r (1 + rho), |rho| <= v (a saved rstd / rrms in
// another format): the kernel's dx is (1 + rho) times what it would give
// with r, and |dx| <= r (|g_i| + M_g + |xhat_i| M_gx) (RMSNorm: no M_g), so
// every dx coefficient grows by (1 + v) and v joins dx_g, dx_mean_g
// (LayerNorm) and dx_proj_rel.
void r_perturbed(Bound& b, double v, bool layer) {
  for (double* k : {&b.dx_g, &b.dx_mean_g, &b.dx_xhat_mean_g, &b.dx_proj_abs, &b.dx_proj_rel}) *k *= 1 + v;
  b.dx_g += v;
  if (layer) b.dx_mean_g += v;
  b.dx_proj_rel += v;
}

// g'_i = (1 + e_i) g_i + tau_i, |e_i| <= v, |tau_i| <= t (round=dyw:T). The
// gradient at g' is r ((g' - g)_i - mean(g' - g) - xhat_i mean((g' - g) xhat))
// away, at most r (v |g_i| + v M_g + v |xhat_i| M_gx) + r t (2 + |xhat_i|)
// (mean|xhat| <= 1; RMSNorm: no mean term); the kernel's terms grow by
// (1 + v) and by r t times their coefficients. The parts in t are absolute,
// taken at the row's largest |xhat| (underflow_abs).
void g_perturbed(Bound& b, double v, double t, const RowCondition& c, bool layer) {
  const double h = max_abs_xhat(c);
  const double absolute =
      product(c.r * t, (layer ? 2 : 1) + h + b.dx_g + b.dx_mean_g + b.dx_xhat_mean_g * h + b.dx_proj_abs + b.dx_proj_rel * h);
  for (double* k : {&b.dx_g, &b.dx_mean_g, &b.dx_xhat_mean_g, &b.dx_proj_abs, &b.dx_proj_rel}) *k *= 1 + v;
  b.dx_g += v;
  if (layer) b.dx_mean_g += v;
  b.dx_proj_rel += v;
  b.underflow_abs += absolute;
}

// Sums kept in format D (acc=D) over n terms: a recursive sum rounded to D at
// every addition, the first included (the terms are float32 values, not D's),
// is within gamma_n(u_D) sum|terms| of the exact sum of its terms, and (in D's
// subnormal range) n t_D more. The row sums G and P move dx by
// r (|dG| + |xhat_i| |dP|); dgamma and dbeta by their own sums'. Added on top
// of the kernel's float32 bound, which carries the rest.
void row_sums_in(Bound& b, DType d, const RowCondition& c, bool layer) {
  const double g = gamma_n(static_cast<double>(c.d), unit_roundoff(d));
  const double t = static_cast<double>(c.d) * half_smallest_subnormal(d);
  if (layer) b.dx_mean_g += g;
  b.dx_proj_rel += g;
  b.underflow_abs += product(c.r * t, (layer ? 1 : 0) + max_abs_xhat(c));
}
void column_sums_in(Bound& b, DType d, double rows) {
  const double g = gamma_n(rows, unit_roundoff(d));
  b.dgamma_rel += g;
  b.dbeta_rel += g;
  b.underflow_abs += rows * half_smallest_subnormal(d);
}

// Each row's dgamma term rounded to format T before it is summed
// (round=dw_row:T): the term the kernel computed, within its bound, times
// (1 + e) plus tau, |e| <= u_T, |tau| <= t_T: dgamma_rel (1 + u_T) + u_T, and
// N t_T absolute over N rows.
void dgamma_terms_rounded(Bound& b, DType t, double rows) {
  const double v = unit_roundoff(t);
  b.dgamma_rel = (1 + v) * b.dgamma_rel + v;
  b.dgamma_abs *= 1 + v;
  b.underflow_abs += rows * half_smallest_subnormal(t);
}

// Every word of `spec` but the reduction, at condition c.
Bound widened(const OpSpec& spec, Bound b, const RowCondition& c, bool column) {
  const bool layer = spec.norm == NormKind::layernorm;
  // Saved statistics in S (rstd / rrms) and M (mean): r' = r (1 + rho),
  // |rho| <= v_s, and mu' = mu + dm, |dm| <= v_m |mu| + t_m, so the xhat the
  // kernel forms, (x - mu') r', is (1 + rho)(xhat - r dm): relative v_s, and
  // absolute (1 + v_s) a with a = v_m kappa + r t_m >= r |dm| (|mu| r <= kappa).
  // float32 statistics are the op's own case, which its bound carries.
  const DType s_fmt = spec.has(TensorName::stat) ? spec.dtype_of(TensorName::stat) : DType::f32;
  const DType m_fmt = spec.has(TensorName::mean) ? spec.dtype_of(TensorName::mean) : DType::f32;
  if (s_fmt != DType::f32 || m_fmt != DType::f32) {
    const double v = twice_rounded(s_fmt);
    const double a = spec.has(TensorName::mean)
                         ? twice_rounded(m_fmt) * c.kappa + product(c.r, half_smallest_subnormal(m_fmt))
                         : 0;
    xhat_perturbed(b, v, (1 + v) * a);
    r_perturbed(b, v, layer);
  }
  if (const auto t = spec.rounding_at(RoundingPoint::xhat))
    xhat_perturbed(b, twice_rounded(*t), half_smallest_subnormal(*t));
  if (const auto t = spec.rounding_at(RoundingPoint::dyw))
    g_perturbed(b, twice_rounded(*t), half_smallest_subnormal(*t), c, layer);
  if (spec.acc) {
    row_sums_in(b, *spec.acc, c, layer);
    if (column && !spec.reduce) column_sums_in(b, *spec.acc, static_cast<double>(c.rows));
  }
  if (const auto t = spec.rounding_at(RoundingPoint::dw_row)) dgamma_terms_rounded(b, *t, static_cast<double>(c.rows));
  for (double* k : {&b.dx_g, &b.dx_mean_g, &b.dx_xhat_mean_g, &b.dx_proj_abs, &b.dx_proj_rel, &b.dgamma_rel,
                    &b.dgamma_abs, &b.dbeta_rel, &b.underflow_abs})
    if (std::isnan(*k)) *k = kInf;
  return b;
}

}  // namespace

BackwardWeights backward_weights(const OpSpec& spec, const std::vector<float>& gamma) {
  BackwardWeights w;
  if (gamma.empty() || !spec.has(TensorName::gamma)) return w;
  w.gamma = store(spec.dtype_of(TensorName::gamma), gamma).widened;
  w.w = w.gamma;
  if (spec.weight != Weight::one_plus_gamma) return w;
  for (std::size_t j = 0; j < w.w.size(); ++j) {
    const float gamma_j = w.gamma[j];
    w.w[j] = 1.0f + gamma_j;  // a NaN or infinite gamma gives its own kind
    // w - 1 is exact in double for every float w that can be 1 + gamma_j's
    // rounding (|w| < 2^52), so equality says that w is 1 + gamma_j exactly.
    if (std::isfinite(gamma_j) && static_cast<double>(w.w[j]) - 1.0 != static_cast<double>(gamma_j)) {
      w.declined = "weight=1+gamma: 1 + gamma_" + std::to_string(j) + " is not a float32 value (gamma = " +
                   std::to_string(w.gamma[j]) + "); the exact backward reference takes float32 weights";
      return w;
    }
  }
  return w;
}

Bound backward_row_bound(const OpSpec& spec, const Bound& kernel, const RowCondition& c) {
  return widened(spec, kernel, c, false);
}

// reduce=block:R:P: B = ceil(N / R) partials, each a dgamma (dbeta) over at
// most R rows, within the kernel's bound over R rows (widened as the spec
// says, with its accumulator's gamma_R(u_D)); each stored in P, (1 + u_P)
// and t_P; then summed in float32 over B terms, gamma_(B-1), each |partial|
// at most its sum of |terms| times the growth so far:
//   dgamma_rel = (1 + dgamma_rel_R)(1 + u_P)(1 + gamma_(B-1)) - 1,
//   dgamma_abs = dgamma_abs_R (1 + u_P)(1 + gamma_(B-1)), likewise dbeta,
//   and B (underflow_abs_R (1 + u_P) + t_P)(1 + gamma_(B-1)) absolute.
Bound backward_column_bound(const OpSpec& spec, BoundFn kernel, const RowCondition& c) {
  if (!spec.reduce) return widened(spec, kernel(c), c, true);
  RowCondition block = c;
  block.rows = std::min(c.rows, spec.reduce->rows);
  Bound b = widened(spec, kernel(block), block, true);
  if (spec.acc) column_sums_in(b, *spec.acc, static_cast<double>(block.rows));
  const double blocks = std::ceil(static_cast<double>(c.rows) / static_cast<double>(block.rows));
  const double u_p = unit_roundoff(spec.reduce->partial), final_sum = 1 + gamma_n(blocks - 1);
  b.dgamma_rel = (1 + b.dgamma_rel) * (1 + u_p) * final_sum - 1;
  b.dgamma_abs *= (1 + u_p) * final_sum;
  b.dbeta_rel = (1 + b.dbeta_rel) * (1 + u_p) * final_sum - 1;
  b.underflow_abs = blocks * (b.underflow_abs * (1 + u_p) + half_smallest_subnormal(spec.reduce->partial)) * final_sum;
  return b;
}

bool saved_formats_hold(const OpSpec& spec, const RowStats& s) {
  if (spec.has(TensorName::stat)) {
    const FloatFormat f = float_format(spec.dtype_of(TensorName::stat));
    if (!(s.r >= f.smallest_normal() && s.r <= f.largest_finite())) return false;
  }
  if (spec.has(TensorName::mean) && !(std::fabs(s.mean) <= largest_finite(spec.dtype_of(TensorName::mean))))
    return false;
  return true;
}

double added_residual_allowance(DType t, double allowed, double exact) {
  const double u_t = t == DType::f32 ? 0 : unit_roundoff(t), t_t = t == DType::f32 ? 0 : half_smallest_subnormal(t);
  return allowed + (kU32 + u_t + kU32 * u_t) * (std::fabs(exact) + allowed) + t_t;
}

double rounded_output_allowance(DType t, double allowed, double exact) {
  if (t == DType::f32) return allowed;
  return allowed + unit_roundoff(t) * (std::fabs(exact) + allowed) + half_smallest_subnormal(t);
}

}  // namespace normcheck::evaluation
