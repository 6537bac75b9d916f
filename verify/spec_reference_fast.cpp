// The fast phase of the spec reference (spec_reference_fast.h).
//
// reference_layernorm_fwd and reference_rmsnorm_fwd take float inputs and
// return every value correctly rounded to double (`exact`) and to float. A
// spec's result is theirs when
//   - the result applies no rounding point but `sum` (exact math, or a policy
//     that rounds only the sum), so that y = w xhat + beta of the norm's input s;
//   - s is a float: x itself, or x + residual when that sum is exact in
//     double (its TwoSum error is 0) and then a float, or its rounding at
//     `sum` (the rounding of an exact double is the rounding of the sum);
//   - the weight is a float: gamma, or 1 + gamma when that sum is one; and
//     gamma, beta are finite (the interpreter gives a non-finite one its
//     IEEE evaluation, docs/semantics.md);
//   - every input of the row is finite.
// The rounding of a value to bf16 or f16 is taken from its correctly
// rounded double v: RN_T(v) = RN_T(exact) unless v is a midpoint of T, since
// a midpoint of T strictly between v and the exact value would be a double
// nearer the exact value than v. A row with such a v is left to the
// interpreter, as is every row the conditions above exclude.
#include "spec_reference_fast.h"

#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "normcheck/float_format.h"
#include "normcheck/reference.h"

namespace normcheck::detail {
namespace {

// The rounding of the exact value whose correctly rounded double is `exact`
// (and float `as_float`) to t; nullopt when the double does not decide it.
std::optional<double> rounded_to(DType t, double exact, float as_float) {
  if (t == DType::f32) return static_cast<double>(as_float);
  if (on_midpoint(t, exact)) return std::nullopt;
  return round_to_format(t, exact);
}

bool finite_and_float(double v) { return std::isfinite(v) && static_cast<double>(static_cast<float>(v)) == v; }

// Whether every value is finite, without a branch per value.
bool all_finite(std::span<const float> v) {
  bool all = true;
  for (const float f : v) all &= std::fabs(f) <= std::numeric_limits<float>::max();
  return all;
}

}  // namespace

void spec_reference_fast(const OpSpec& spec, const SpecInputs& in, SpecResult which, SpecForwardReference& out,
                         std::vector<char>& decided) {
  const bool policy = which == SpecResult::policy;
  for (RoundingPoint p : {RoundingPoint::r, RoundingPoint::xhat, RoundingPoint::weight, RoundingPoint::scaled})
    if (policy && spec.rounding_at(p)) return;
  const auto d = static_cast<std::size_t>(in.cols), rows = static_cast<std::size_t>(in.rows);
  for (std::span<const float> v : {in.gamma, in.beta})
    for (float f : v)
      if (!std::isfinite(f)) return;
  std::vector<float> weight;
  if (spec.weight != Weight::none && !in.gamma.empty()) {
    weight.resize(d);
    for (std::size_t j = 0; j < d; ++j) {
      const double w = spec.weight == Weight::one_plus_gamma ? 1.0 + in.gamma[j] : in.gamma[j];  // exact in double
      if (!finite_and_float(w)) return;
      weight[j] = static_cast<float>(w);
    }
  }
  const std::optional<DType> at_sum = policy ? spec.rounding_at(RoundingPoint::sum) : std::nullopt;
  const DType sum_t = spec.dtype_of(TensorName::residual_out);

  // the norm's input s, row by row; a row this phase cannot take stays 0 (and
  // undecided). Without `add` it is x itself wherever x is finite: then x is
  // handed over as it is, with no copy.
  std::vector<char> fits(rows, 1);
  const bool x_is_s = !spec.add && all_finite(in.x);
  std::vector<float> s(x_is_s ? 0 : rows * d, 0.0f);
  for (std::size_t row = 0; row < rows && !x_is_s; ++row) {
    for (std::size_t i = row * d; i < (row + 1) * d && fits[row]; ++i) {
      const double a = in.x[i];
      if (!spec.add) {
        fits[row] = std::isfinite(a);
        s[i] = in.x[i];
        continue;
      }
      const double b = in.residual[i], sum = a + b;
      const double b_virtual = sum - a, error = (a - (sum - b_virtual)) + (b - b_virtual);  // TwoSum
      const double norm_input = at_sum ? round_to_format(*at_sum, sum) : sum;
      fits[row] = std::isfinite(sum) && error == 0 && finite_and_float(norm_input);
      if (!fits[row]) continue;
      out.residual_out.exact[i] = sum;
      out.residual_out.rounded[i] = round_to_format(sum_t, sum);
      s[i] = static_cast<float>(norm_input);
    }
  }
  const DType y_t = spec.dtype_of(TensorName::y), stat_t = spec.dtype_of(TensorName::stat);
  const bool layer = spec.norm == NormKind::layernorm;
  std::optional<LayerNormFwdReference> ln;
  std::optional<RmsNormFwdReference> rms;
  const std::span<const float> norm_input = x_is_s ? in.x : std::span<const float>(s);
  if (layer) ln = reference_layernorm_fwd(norm_input, weight, in.beta, in.rows, in.cols, in.eps);
  else rms = reference_rmsnorm_fwd(norm_input, weight, in.rows, in.cols, in.eps);
  ExactValues& y = layer ? ln->y : rms->y;
  ExactValues& xhat = layer ? ln->xhat : rms->xhat;
  // y and xhat (spec_reference_fast.h): of a float32 y, the float
  // reference's own arrays, taken whole, every row's decided below; a row
  // left undecided is the interpreter's, which writes every element of it.
  const std::size_t n = rows * d;
  const bool y_whole = y_t == DType::f32;
  if (y_whole) {
    out.y.exact = std::move(y.exact);
    out.y.rounded.assign(y.rounded.begin(), y.rounded.end());
    out.xhat = std::move(xhat.exact);
  } else {
    out.y = {std::vector<double>(n), std::vector<double>(n)};
    out.xhat.assign(n, 0);
  }
  const ExactValues& stat = layer ? ln->rstd : rms->rrms;
  const std::vector<RowStats>& stats = layer ? ln->stats : rms->stats;

  for (std::size_t row = 0; row < rows; ++row) {
    if (!fits[row]) continue;
    out.s_stats[row] = stats[row];  // of s, whatever the weight: every row the references took
    out.s_stats_known[row] = 1;
    const auto undecided = [&](DType t, const ExactValues& v, std::size_t i, SpecValues& to) {
      const std::optional<double> r = rounded_to(t, v.exact[i], v.rounded[i]);
      if (!r) return true;
      to.exact[i] = v.exact[i];
      to.rounded[i] = *r;
      return false;
    };
    if (layer && undecided(spec.dtype_of(TensorName::mean), ln->mean, row, out.mean)) continue;
    if (undecided(stat_t, stat, row, out.stat)) continue;
    bool all = true;  // a float32 y is the float reference's rounding, decided (taken whole above)
    for (std::size_t i = row * d; i < (row + 1) * d && all && !y_whole; ++i) {
      all = !undecided(y_t, y, i, out.y);
      out.xhat[i] = xhat.exact[i];
    }
    if (!all) continue;
    // the condition as the interpreter states it (spec_reference.cpp, condition())
    const RowStats& st = stats[row];
    RowCondition c = st.condition;
    c.rows = 1;
    c.r = st.r;
    c.eps_share = std::isinf(st.r) ? 0 : static_cast<double>(in.eps) * st.r * st.r;
    if (std::isnan(c.kappa)) c.kappa = 0;
    if (std::isnan(c.max_kappa)) c.max_kappa = 0;
    out.condition[row] = c;
    out.mean_abs_s[row] = st.mean_abs_x;
    out.finite[row] = 1;
    decided[row] = 1;
  }
}

}  // namespace normcheck::detail
