// Admissible ranges of a forward spec's outputs and policy identification
// (spec_policy.h). docs/ops.md, "The admissible range", derives each stage.
//
// Notation: u = 2^-24 (float32's unit roundoff); b the default bound of the
// norm (kernels/bounds.cpp: what a careful two-pass float32 kernel meets) at
// the condition of the norm's input s; xhat, r, mean the exact values of the
// policy's s (spec_reference_fwd with only the `sum` rounding applied).
//
// Each stage's value lies in an interval [lo, hi]:
//   r^      in r (1 -+ b.stat_rel);                      at `r`: [rho_lo, rho_hi] = [RN(lo), RN(hi)]
//   xhat^   in xhat -+ (b.xhat_abs + b.xhat_rel |xhat|)   (no `r` rounding: the default bound's xhat error)
//           or, with rho: (s - mu) rho over rho in [rho_lo, rho_hi], -+ e with
//             LayerNorm e = gamma_2 |s - mu| rho_hi + b.mean_rel mean|s| rho_hi (1 + gamma_2) + 2^-150
//               (fl(fl(s - mean^) rho): the mean's error, one subtraction and one product),
//             RMSNorm   e = u |s| rho_hi + 2^-150 (one product);
//                                                          at `xhat`: rounded ends
//   w^      gamma (exact); 1 + gamma within (1 -+ u) (one float32 addition); at `weight`: rounded ends
//   scaled  w^ xhat^ over the corners, -+ (u max|w^ xhat^| + 2^-150);  at `scaled`: rounded ends
//   y^      scaled + beta -+ u (max|scaled| + |beta|), then rounded to y's format.
// Without a rounding point at r, xhat or scaled and with weight gamma, y^ is the
// textbook kernel's: y -+ y_allowance(b, gamma, beta, xhat) (evaluate.h), then
// rounded to y's format. Rounding to nearest is monotone, so the rounded ends
// of an interval bound the rounding of every value inside it.
// Every interval is computed in double from correctly rounded doubles and
// widened by 2^-45 relative before it is rounded: a few dozen double
// operations err by far less, and the allowances are 2^-24 relative or more.
//
// A rounding point rounds an end past its format's largest finite value to
// +-inf and one below its smallest normal to a subnormal or 0 (round_to_format):
// the policy's own values. An infinite end is exact and stays through the
// later stages, since a float32 operation on an infinity (inf + beta, w inf
// with w != 0) is that infinity with no rounding error: the widening and the
// float32 errors apply to finite ends, relative to the largest finite |end|.
// An r rounded to +inf gives xhat = +-inf by the sign of s - mu where the
// kernel's s - mean^ has that sign for certain, and nothing promised where
// it may be 0 (0 inf is NaN).
//
// A quantized y (op_spec.h, Quantization) goes on from y^'s range [lo, hi]
// in y's dtype (values of that format: what the kernel holds before the cast):
//   t       fl32(y fl32(1/s)), fl32(y / s) with scale_apply=divide, or fl32(y s)
//           with scale_apply=multiply, at both ends: y -> fl32(y c), y -> fl32(y / s)
//           and y -> fl32(y s) are monotone for s > 0 and c > 0
//   code    cast(t) at both ends: clamping and rounding to nearest are monotone
// and, for a dynamic scale over a row or block J,
//   a       in [max_J min|y^|, max_J max|y^|]    (min|y^| = 0 on a range that holds 0)
//   s       max(fl32(min(a, ub) / qmax), smin) at both ends of a: monotone again;
// the tensor's amax (the word amax) is the same a over every element.
// Each float32 operation is evaluated exactly: a product of two floats is
// exact in double, and a quotient correctly rounded to double and then to
// float32 is the correctly rounded quotient (53 >= 2 * 24 + 2: the double
// rounding is innocuous, Figueroa 1995).
#include "normcheck/spec_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <stdexcept>

#include "evaluate/allowance.h"
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "simd/thread_pool.h"
#include "simd/vector_clones.h"

namespace normcheck {
namespace {

constexpr double u = kUnitRoundoff;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kWiden = 0x1p-45;

struct Range {
  double lo, hi;
};

// An infinite end is kept: it is a rounding point's or an output's overflow
// value (+-inf is what a rounding past the format's largest finite value
// gives), exact, and inf - inf would make the end NaN.
double widened_end(double v, double dir) { return std::isinf(v) ? v : v + dir * std::fabs(v) * kWiden; }

Range widened(Range r) { return {widened_end(r.lo, -1), widened_end(r.hi, 1)}; }

// The rounded ends of a widened range: every value of format t a real in the
// range rounds to. Always inline: the ranges take it for every element.
[[gnu::always_inline]] inline Range rounded(DType t, Range r) {
  const Range w = widened(r);
  return {round_to_format(t, w.lo), round_to_format(t, w.hi)};
}

Range around(double center, double allowance) {
  if (std::isnan(allowance) || std::isinf(allowance)) return {-kInf, kInf};
  return {center - allowance, center + allowance};
}

// The product of two ranges: the least and greatest of the corners.
Range times(Range a, Range b) {
  const double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  Range r{c[0], c[0]};
  for (double v : c) {
    if (std::isnan(v)) return {-kInf, kInf};  // 0 * inf: nothing is known
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
  }
  return r;
}

// The largest finite |value| of the range: what a float32 operation's
// rounding error is relative to. An infinite value (a rounding point's
// overflow) goes through the later float32 operations exactly: inf + beta
// and w inf (w != 0) are infinities, with no rounding error.
double magnitude(Range r) {
  const auto finite = [](double v) { return std::isinf(v) ? 0.0 : std::fabs(v); };
  return std::max(finite(r.lo), finite(r.hi));
}

// The range widened by e on each side; an infinite end stays (it is exact,
// magnitude() above).
Range plus_minus(Range r, double e) { return {std::isinf(r.lo) ? r.lo : r.lo - e, std::isinf(r.hi) ? r.hi : r.hi + e}; }

// The textbook kernel's y ranges of a row in vectors (no rounding point
// but `sum`, weight gamma or none): for each j where it is 0 in `scalar`,
//   [lo_j, hi_j] = rounded(y_t, around(exact_j, y_allowance_formula(b, w_j, beta_j, xhat_j))),
// the ranges' own expression (admissible_from below) where every
// coefficient of the bound is finite (y_coefficients_finite), taken on its
// common path: exact_j and the allowance finite, and both widened ends in
// y_t's normal rounding range, where round_to_format is its bit path
// (float_format.h). widened()'s end v + dir |v| 2^-45 is v -+ |v| 2^-45 as
// written here, exactly. An element off that path (a non-finite value or
// allowance, an end below the normal range or past it) gets scalar_j = 1 and
// is left to the scalar expression.
NORMCHECK_VECTOR_CLONES
void textbook_y_row(std::size_t d, FormatConstants c, Bound b, const double* __restrict exact,
                    const double* __restrict xhat, const double* __restrict w, const double* __restrict beta,
                    double* __restrict lo, double* __restrict hi, char* __restrict scalar) {
  for (std::size_t j = 0; j < d; ++j) {
    const double e = exact[j], a = evaluation::y_allowance_formula(b, w[j], beta[j], xhat[j]);
    const double l = e - a, h = e + a;
    const double l_wide = l - std::fabs(l) * kWiden, h_wide = h + std::fabs(h) * kWiden;
    lo[j] = round_in_normal_range(c, l_wide);
    hi[j] = round_in_normal_range(c, h_wide);
    const bool lo_fast = in_normal_rounding_range(c, l_wide), hi_fast = in_normal_rounding_range(c, h_wide);
    scalar[j] = !(lo_fast & hi_fast);  // `&`: no branch
  }
}

// The spec with only its `sum` rounding: whose exact reference gives the
// norm's input, statistics and xhat the later stages start from.
OpSpec sum_only(const OpSpec& spec) {
  OpSpec s = spec;
  for (auto& p : s.round) p.reset();
  s.round[static_cast<std::size_t>(RoundingPoint::sum)] = spec.rounding_at(RoundingPoint::sum);
  return s;
}

void set(AdmissibleRange& a, std::size_t i, Range r) {
  a.lo[i] = r.lo;
  a.hi[i] = r.hi;
}

AdmissibleRange sized(std::size_t n) {
  AdmissibleRange a;
  a.lo.resize(n);
  a.hi.resize(n);
  return a;
}

// Whether the norm's input s is known and the same under the float32 sum:
// with `sum` at a 16-bit format T, a kernel that adds in float32 and then
// rounds reads RN_T(RN_32(x + residual)), which can differ from
// RN_T(x + residual) (a double rounding). Rows where it does are not held to
// a y range, nor rows where the exact sum's rounding is not known from the
// double nearest it: the double is inexact and a midpoint of T (a midpoint
// strictly between the two would be a double nearer the exact sum). An exact
// double (its TwoSum error 0, as for the sum of two bf16 or f16 values of
// nearby binades) is the sum, midpoint or not.
bool sum_rounds_alike(const OpSpec& spec, const SpecInputs& in, std::size_t base, std::size_t d,
                      const SpecForwardReference& ref) {
  const std::optional<DType> t = spec.rounding_at(RoundingPoint::sum);
  if (!spec.add || !t || *t == DType::f32) return true;
  for (std::size_t i = base; i < base + d; ++i) {
    const double a = in.x[i], b = in.residual[i], exact_sum = ref.residual_out.exact[i];
    const double b_virtual = exact_sum - a, error = (a - (exact_sum - b_virtual)) + (b - b_virtual);  // TwoSum
    if (error != 0 && on_midpoint(*t, exact_sum)) return false;
    if (round_to_format(*t, exact_sum) != round_to_format(*t, static_cast<double>(in.x[i] + in.residual[i])))
      return false;
  }
  return true;
}

// The code range of y and the range of a dynamic scale, from y's pre-cast
// ranges in out.y (replaced by the code ranges). File header: the derivation.
void quantize_ranges(const Quantization& q, const SpecInputs& in, SpecAdmissible& out) {
  const auto rows = static_cast<std::size_t>(in.rows), d = static_cast<std::size_t>(in.cols);
  const auto per_row = static_cast<std::size_t>(scales_per_row(q, in.cols));
  const std::size_t group = q.scale == ScaleKind::per_block ? static_cast<std::size_t>(q.group) : d;
  const double qmax = quant_max(q.cast.format);
  const auto f32 = [](double v) { return round_to_format(DType::f32, v); };
  const auto nothing = [](double lo, double hi) { return std::isnan(lo) || std::isnan(hi) || std::isinf(lo) || std::isinf(hi); };
  if (q.dynamic()) out.scale = sized(rows * per_row);
  for (std::size_t row = 0; row < rows; ++row)
    for (std::size_t b = 0; b < per_row; ++b) {
      const std::size_t first = row * d + b * group, last = std::min(first + group, (row + 1) * d);
      if (q.dynamic()) {
        double a_lo = 0, a_hi = 0;
        bool known = true;
        for (std::size_t i = first; i < last; ++i) {
          const double lo = out.y.lo[i], hi = out.y.hi[i];
          if (nothing(lo, hi)) known = false;
          a_lo = std::max(a_lo, lo <= 0 && hi >= 0 ? 0.0 : std::min(std::fabs(lo), std::fabs(hi)));
          a_hi = std::max(a_hi, std::max(std::fabs(lo), std::fabs(hi)));
        }
        const auto scale_of = [&](double a) {
          return std::max(f32(std::min(a, static_cast<double>(q.scale_ub)) / qmax), static_cast<double>(q.scale_min));
        };
        set(out.scale, row * per_row + b, known ? Range{scale_of(a_lo), scale_of(a_hi)} : Range{-kInf, kInf});
      }
      const double s = q.dynamic() ? (in.scale.size() == rows * per_row ? in.scale[row * per_row + b] : NAN)
                                   : (in.scale.size() == 1 ? in.scale[0] : NAN);
      for (std::size_t i = first; i < last; ++i) {
        const double lo = out.y.lo[i], hi = out.y.hi[i];
        if (nothing(lo, hi) || !scale_judged(q, s)) {
          set(out.y, i, {-kInf, kInf});
          continue;
        }
        set(out.y, i, {quantized_code(q, quant_t(q, lo, s)), quantized_code(q, quant_t(q, hi, s))});
      }
    }
}

// The range of the tensor's amax from y's pre-cast ranges (before
// quantize_ranges replaces them): the bounds of a dynamic scale's a over
// every element. File header: the derivation.
AdmissibleRange amax_range(const AdmissibleRange& y) {
  AdmissibleRange out = sized(1);
  double a_lo = 0, a_hi = 0;
  bool nothing = false;
  for (std::size_t i = 0; i < y.lo.size(); ++i) {
    const double lo = y.lo[i], hi = y.hi[i];
    if (std::isnan(lo) || std::isnan(hi)) {  // a row with a non-finite input: the tensor's amax is NaN
      set(out, 0, {NAN, NAN});
      return out;
    }
    nothing = nothing || (lo == -kInf && hi == kInf);  // an ill-posed row: its y may be NaN (0 x inf)
    a_lo = std::max(a_lo, lo <= 0 && hi >= 0 ? 0.0 : std::min(std::fabs(lo), std::fabs(hi)));
    a_hi = std::max(a_hi, std::max(std::fabs(lo), std::fabs(hi)));
  }
  // an unbounded range gives a_hi = inf: nothing promised above a_lo
  set(out, 0, nothing ? Range{-kInf, kInf} : Range{a_lo, a_hi});
  return out;
}

SpecAdmissible admissible_from(const OpSpec& spec, const SpecInputs& in, const SpecForwardReference& ref,
                               BoundFn bound) {
  const auto rows = static_cast<std::size_t>(in.rows), d = static_cast<std::size_t>(in.cols), n = rows * d;
  const bool layer = spec.norm == NormKind::layernorm;
  if (!bound) bound = default_bound(layer ? Op::layernorm_fwd : Op::rmsnorm_fwd);
  const DType y_t = spec.dtype_of(TensorName::y), stat_t = spec.dtype_of(TensorName::stat);
  const auto at = [&](RoundingPoint p) { return spec.rounding_at(p); };
  SpecAdmissible out;
  out.y = sized(n);
  out.stat = sized(rows);
  if (layer) out.mean = sized(rows);
  if (spec.add) out.residual_out = sized(n);
  if (at(RoundingPoint::r)) {  // the statistic before its rounding point: every row's ends are set below
    out.stat.before_lo.resize(rows, -kInf);
    out.stat.before_hi.resize(rows, kInf);
  }

  const bool textbook = !at(RoundingPoint::r) && !at(RoundingPoint::xhat) && !at(RoundingPoint::scaled) &&
                        spec.weight != Weight::one_plus_gamma && !at(RoundingPoint::weight);
  // the textbook ranges' weight and beta of each column, for textbook_y_row
  std::vector<double> column_w, column_beta;
  if (textbook) {
    column_w.assign(d, 1.0);
    column_beta.assign(d, 0.0);
    for (std::size_t j = 0; j < d; ++j) {
      if (spec.weight != Weight::none && !in.gamma.empty()) column_w[j] = in.gamma[j];
      if (!in.beta.empty()) column_beta[j] = in.beta[j];
    }
  }

  // Each row writes its own elements only: rows in contiguous chunks on the
  // kernels' thread pool (on this thread below simd::kParallelCheckElements).
  const auto ranges_of_rows = [&](std::size_t first_row, std::size_t end_row) {
    std::vector<char> scalar(textbook ? d : 0);  // textbook_y_row's elements left to the scalar expression
    for (std::size_t row = first_row; row < end_row; ++row) {
      const std::size_t base = row * d;
      if (spec.add) {
        // the correct rounding of x + residual, or of its float32 sum (a double
        // rounding); on a row with a non-finite input too, where the sum of an
        // element is the extended-real sum (NaN: the range is NaN)
        const DType t = spec.dtype_of(TensorName::residual_out);
        for (std::size_t i = base; i < base + d; ++i) {
          const double exact = ref.residual_out.rounded[i];
          const double via_float = round_to_format(t, static_cast<double>(in.x[i] + in.residual[i]));
          set(out.residual_out, i, std::isnan(exact) ? Range{NAN, NAN}
                                                     : Range{std::min(exact, via_float), std::max(exact, via_float)});
        }
      }
      if (!ref.finite[row]) {
        constexpr Range kNaN{NAN, NAN};
        for (std::size_t i = base; i < base + d; ++i) set(out.y, i, kNaN);
        set(out.stat, row, kNaN);
        if (layer) set(out.mean, row, kNaN);
        continue;
      }
      const RowCondition& c = ref.condition[row];
      const Bound b = bound(c);
      const double r = c.r, mean_abs = ref.mean_abs_s[row];
      // the row as evaluate()'s rules see it (evaluate/allowance.h, row_checked): one home for both paths
      RowStats stats;
      stats.r = r;
      stats.mean_abs_x = mean_abs;
      stats.condition = c;
      if (layer)
        set(out.mean, row, rounded(spec.dtype_of(TensorName::mean), around(ref.mean.exact[row], evaluation::mean_allowance(b, stats))));
      if (!row_checked(layer ? Op::layernorm_fwd : Op::rmsnorm_fwd, stats)) {  // ill-posed: nothing promised
        set(out.stat, row, {-kInf, kInf});
        for (std::size_t i = base; i < base + d; ++i) set(out.y, i, {-kInf, kInf});
        continue;
      }

      const Range r_hat = around(r, evaluation::stat_allowance(b, stats));
      const std::optional<DType> at_r = at(RoundingPoint::r);
      const Range rho = at_r ? rounded(*at_r, r_hat) : r_hat;
      // the stored statistic: the scale before its rounding point or after it,
      // the latter a value of the point's format (AdmissibleRange::grid)
      const Range before = rounded(stat_t, r_hat), after = rounded(stat_t, rho);
      set(out.stat, row, {std::min(before.lo, after.lo), std::max(before.hi, after.hi)});
      if (at_r) {
        out.stat.before_lo[row] = before.lo;
        out.stat.before_hi[row] = before.hi;
      }

      const bool y_checked = sum_rounds_alike(spec, in, base, d, ref);
      const bool in_vectors = y_checked && textbook && evaluation::y_coefficients_finite(b);
      if (in_vectors)
        textbook_y_row(d, format_constants(y_t), b, ref.y.exact.data() + base, ref.xhat.data() + base,
                       column_w.data(), column_beta.data(), out.y.lo.data() + base, out.y.hi.data() + base,
                       scalar.data());
      for (std::size_t i = base; i < base + d; ++i) {
        if (in_vectors && !scalar[i - base]) continue;
        if (!y_checked) {
          set(out.y, i, {-kInf, kInf});
          continue;
        }
        const std::size_t col = i - base;
        if (!std::isfinite(ref.y.exact[i])) {  // a non-finite gamma or beta: its IEEE value, exactly
          set(out.y, i, {ref.y.rounded[i], ref.y.rounded[i]});
          continue;
        }
        const double xhat = ref.xhat[i];
        const double gamma = in.gamma.empty() ? (spec.weight == Weight::one_plus_gamma ? 0.0 : 1.0) : in.gamma[col];
        const double beta = in.beta.empty() ? 0.0 : in.beta[col];
        if (textbook) {
          const double w = spec.weight == Weight::none || in.gamma.empty() ? 1.0 : gamma;
          set(out.y, i, rounded(y_t, around(ref.y.exact[i], evaluation::y_allowance_of(b, w, beta, xhat))));
          continue;
        }
        Range x_hat;
        if (at_r) {
          const double shifted = xhat / r;  // s - mu (LayerNorm) or s (RMSNorm), within 2^-52 relative
          // e_diff: how far fl(fl(s - mean^) rho) is from (s - mu) rho per unit
          // of rho (LayerNorm: the mean's error, one subtraction and one product;
          // RMSNorm: one product)
          const double e_diff = layer ? gamma_n(2) * std::fabs(shifted) + b.mean_rel * mean_abs * (1 + gamma_n(2))
                                      : u * std::fabs(shifted);
          if (std::isinf(rho.hi)) {
            // r rounded past the format's largest finite value: the policy's rho
            // is +inf, and fl(s - mean^) inf is +-inf by the sign of
            // fl(s - mean^), NaN where that is 0. The sign is s - mu's where
            // |s - mu| > e_diff, which bounds fl(s - mean^)'s distance from it
            // (RMSNorm's s is exact: its sign is known wherever s != 0). The
            // finite end is the product at rho_lo: it is monotone in rho.
            const double d_err = layer ? e_diff : 0;
            if (!(std::fabs(shifted) > d_err)) {
              x_hat = {-kInf, kInf};
            } else {
              const double inf = std::copysign(kInf, shifted);
              const double finite = std::isinf(rho.lo) ? inf : shifted * rho.lo - std::copysign(e_diff * rho.lo + kUnderflowUnit, shifted);
              x_hat = {std::min(finite, inf), std::max(finite, inf)};
            }
          } else {
            x_hat = plus_minus(times({shifted, shifted}, rho), e_diff * rho.hi + kUnderflowUnit);
          }
        } else {
          x_hat = around(xhat, b.xhat_abs + b.xhat_rel * std::fabs(xhat));
        }
        if (const auto t = at(RoundingPoint::xhat)) x_hat = rounded(*t, x_hat);

        Range w{1, 1};
        if (spec.weight == Weight::gamma && !in.gamma.empty()) w = {gamma, gamma};
        if (spec.weight == Weight::one_plus_gamma) {
          const double one_plus = 1 + gamma;  // within 2^-53 relative; the widening covers it
          w = around(one_plus, u * std::fabs(one_plus));
        }
        if (const auto t = at(RoundingPoint::weight)) w = rounded(*t, w);

        Range scaled = times(w, x_hat);
        scaled = plus_minus(scaled, u * magnitude(scaled) + kUnderflowUnit);
        if (const auto t = at(RoundingPoint::scaled)) scaled = rounded(*t, scaled);
        Range y = {scaled.lo + beta, scaled.hi + beta};
        if (!in.beta.empty()) y = plus_minus(y, u * (magnitude(scaled) + std::fabs(beta)));
        set(out.y, i, rounded(y_t, y));
      }
    }
  };
  const int64_t chunks = simd::check_chunks(in.rows, in.cols);
  simd::parallel_for(chunks, [&](int64_t c) {  // one chunk: on this thread
    ranges_of_rows(static_cast<std::size_t>(simd::chunk_first_row(in.rows, chunks, c)),
                   static_cast<std::size_t>(simd::chunk_first_row(in.rows, chunks, c + 1)));
  });
  if (const std::optional<DType> at_r = at(RoundingPoint::r)) out.stat.grid = *at_r;
  if (spec.quant && spec.quant->amax) out.amax = amax_range(out.y);  // from the pre-cast ranges
  if (spec.quant) quantize_ranges(*spec.quant, in, out);
  return out;
}

}  // namespace

double quantized_code(const Quantization& q, double t) {
  const double c = quant_cast(q.cast, t);
  return std::isnan(c) && !std::isnan(t) ? std::copysign(kInf, t) : c;
}

double quant_t(const Quantization& q, double y, double s) {
  const auto f32 = [](double v) { return round_to_format(DType::f32, v); };
  switch (q.apply) {
    case ScaleApply::divide: return f32(y / s);
    case ScaleApply::multiply: return f32(y * s);
    case ScaleApply::inverse: break;
  }
  return f32(y * f32(1.0 / s));
}

double exact_quant_t(const Quantization& q, double y, double s) { return q.apply == ScaleApply::multiply ? y * s : y / s; }

double dequantized(const Quantization& q, double code, double s) {
  return q.apply == ScaleApply::multiply ? code / s : code * s;
}

bool scale_judged(const Quantization& q, double s) {
  if (!(s > 0) || std::isinf(s)) return false;
  // an inverse past float32's range (s < 2^-128) casts every y to +-max or NaN: a degenerate scale
  return q.apply != ScaleApply::inverse || std::isfinite(round_to_format(DType::f32, 1.0 / s));
}

std::vector<double> nonfinite_t_codes(const Quantization& q) {
  if (!q.nan_clamp) return {};
  const double nan_code = q.cast.format == QuantFormat::int8 ? 0 : quant_max(q.cast.format);
  return {nan_code, quant_cast(q.cast, kInf), quant_cast(q.cast, -kInf)};
}

std::pair<double, double> AdmissibleRange::ends_for(std::size_t i, double v) const {
  if (grid && !before_lo.empty() && std::isfinite(v) && round_to_format(*grid, v) != v)
    return {before_lo[i], before_hi[i]};
  return {lo[i], hi[i]};
}

bool AdmissibleRange::admits(std::size_t i, double v) const {
  if (std::isnan(lo[i])) return std::isnan(v);
  if (lo[i] == -kInf && hi[i] == kInf) return true;
  const auto [l, h] = ends_for(i, v);
  return v >= l && v <= h;
}

SpecAdmissible spec_admissible_fwd(const OpSpec& spec, const SpecInputs& in, BoundFn bound,
                                   const SpecForwardReference* sum_only_reference) {
  if (sum_only_reference) return admissible_from(spec, in, *sum_only_reference, bound);
  return admissible_from(spec, in, spec_reference_fwd(sum_only(spec), in, SpecResult::policy), bound);
}

OpSpec spec_sum_only(const OpSpec& spec) { return sum_only(spec); }

PolicyCheck check_policy(const OpSpec& spec, const SpecAdmissible& a, const SpecOutputs& out,
                         const SpecAdmissible* declared) {
  PolicyCheck check;
  const std::pair<TensorName, std::pair<const AdmissibleRange*, const std::vector<double>*>> outputs[] = {
      {TensorName::y, {&a.y, &out.y}},
      {TensorName::residual_out, {&a.residual_out, &out.residual_out}},
      {TensorName::mean, {&a.mean, &out.mean}},
      {TensorName::stat, {&a.stat, &out.stat}}};
  // the declared policy's range of the same output, when given and sized alike
  const auto declared_range = [&](TensorName name, std::size_t size) -> const AdmissibleRange* {
    if (!declared) return nullptr;
    const AdmissibleRange* r = name == TensorName::y              ? &declared->y
                               : name == TensorName::residual_out ? &declared->residual_out
                               : name == TensorName::mean         ? &declared->mean
                                                                  : &declared->stat;
    return r->lo.size() == size ? r : nullptr;
  };
  const auto checked = [&](const std::string& output, const AdmissibleRange& range, const std::vector<double>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      ++check.checked;
      if (range.admits(i, values[i])) continue;
      if (check.outside++ == 0) {
        check.first_output = output;
        check.first_index = static_cast<int64_t>(i);
        check.first_value = values[i];
        check.first_lo = range.lo[i];
        check.first_hi = range.hi[i];
      }
    }
  };
  if (!a.scale.lo.empty() && !out.scale.empty()) {
    if (out.scale.size() != a.scale.lo.size()) throw std::invalid_argument("check_policy: scale has the wrong size");
    checked("scale", a.scale, out.scale);
  }
  for (const auto& [name, pair] : outputs) {
    const auto& [range, values] = pair;
    if (range->lo.empty() || values->empty()) continue;
    if (values->size() != range->lo.size())
      throw std::invalid_argument("check_policy: " + std::string(to_string(name, spec.norm)) + " has " +
                                  std::to_string(values->size()) + " values, the problem " +
                                  std::to_string(range->lo.size()));
    for (std::size_t i = 0; i < values->size(); ++i) {
      // a row with a non-finite input says nothing of where a kernel rounds:
      // the non-finite rule judges it (evaluate.h, NonFinite); an exact sum
      // that is NaN is residual_out's own value
      if (name != TensorName::residual_out && std::isnan(range->lo[i])) continue;
      ++check.checked;
      if (range->admits(i, (*values)[i])) {
        const AdmissibleRange* d = declared_range(name, values->size());
        if (d && range->unbounded(i) && !std::isnan(d->lo[i]) && !d->unbounded(i) && !d->admits(i, (*values)[i]))
          ++check.vacuous;
        continue;
      }
      if (check.outside++ == 0) {
        check.first_output = std::string(to_string(name, spec.norm));
        check.first_index = static_cast<int64_t>(i);
        check.first_value = (*values)[i];
        check.first_lo = range->lo[i];
        check.first_hi = range->hi[i];
      }
    }
  }
  return check;
}

namespace {

// Each spec of `specs` with each option of one choice applied (`apply(spec,
// option)`): the candidates grow choice by choice, in the order of the options.
template <class Option, class Apply>
std::vector<OpSpec> with_each(const std::vector<OpSpec>& specs, const std::vector<Option>& options, Apply apply) {
  std::vector<OpSpec> out;
  for (const OpSpec& s : specs)
    for (const Option& o : options) {
      OpSpec c = s;
      apply(c, o);
      out.push_back(c);
    }
  return out;
}

using PointOptions = std::array<std::vector<std::optional<DType>>, kRoundingPointCount>;

// Every spec that takes, at each rounding point, one of its options.
std::vector<OpSpec> each_rounding(const OpSpec& bare, const PointOptions& options) {
  std::vector<OpSpec> out = {bare};
  for (std::size_t p = 0; p < kRoundingPointCount; ++p)
    out = with_each(out, options[p], [p](OpSpec& c, std::optional<DType> o) { c.round[p] = o; });
  return out;
}

constexpr std::size_t index(RoundingPoint p) { return static_cast<std::size_t>(p); }

// A value that may be rounded to `formats` or not: none first, then each
// 16-bit format once (a rounding to float32 inside float32 arithmetic is no
// policy of its own), and `declared` (the spec's own choice) wherever it is.
std::vector<std::optional<DType>> not_or_rounded(std::initializer_list<DType> formats, std::optional<DType> declared) {
  std::vector<std::optional<DType>> out = {std::nullopt};
  const auto once = [&](std::optional<DType> v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  for (DType f : formats)
    if (f != DType::f32) once(f);
  once(declared);
  return out;
}

std::vector<OpSpec> candidate_policies_fwd(const OpSpec& spec, DType t) {
  OpSpec bare = spec;
  for (auto& p : bare.round) p.reset();
  // each point's options: not rounded, or rounded to the formats that make a difference
  PointOptions options;
  for (auto& o : options) o = {std::nullopt};
  if (spec.add) options[index(RoundingPoint::sum)] = {std::nullopt, spec.dtype_of(TensorName::residual_out), DType::f32};
  if (spec.add && spec.dtype_of(TensorName::residual_out) == DType::f32)
    options[index(RoundingPoint::sum)] = {std::nullopt, DType::f32, t};
  options[index(RoundingPoint::r)] = {std::nullopt, t};
  options[index(RoundingPoint::xhat)] = {std::nullopt, t};
  if (spec.weight == Weight::one_plus_gamma) options[index(RoundingPoint::weight)] = {std::nullopt, t};
  // gamma xhat rounded to y's format is y itself when no beta is added: the same policy
  if (spec.weight != Weight::none && (spec.bias || spec.dtype_of(TensorName::y) != t))
    options[index(RoundingPoint::scaled)] = {std::nullopt, t};
  std::vector<OpSpec> out = each_rounding(bare, options);
  // a quantized y: the cast reads y rounded to the activations' format, or the float32 value
  if (spec.quant)
    out = with_each(out, std::vector<DType>{t, DType::f32},
                    [](OpSpec& c, DType y) { c.dtype[static_cast<std::size_t>(TensorName::y)] = y; });
  return out;
}

// The backward's choices (op_spec.h; docs/accuracy_backward.md, "Backward
// specs"), each rounding to the format of the values it stands between:
//   xhat, dyw      activation-side values (x r, w dy): x's format
//   dw_row         a row's dgamma term: x's format (Liger rounds it to X's
//                  dtype) or dgamma's (the gradient it is summed into)
//   acc            every sum in x's format (Liger's casting mode none)
//   reduce's P     a partial of rows stored in x's or dgamma's format, or float32
// A weight=none backward has no dy w and no dgamma: only xhat and acc.
// A backward spec without the choices above (no rounding point, float32
// sums and partials): the call's interface, which every candidate shares.
OpSpec backward_interface(OpSpec s) {
  s.round = {};
  s.acc.reset();
  if (s.reduce) s.reduce->partial = DType::f32;
  return s;
}

std::vector<OpSpec> candidate_policies_bwd(const OpSpec& spec, DType t) {
  const OpSpec bare = backward_interface(spec);
  const bool weighted = spec.weight != Weight::none;
  const DType dgamma = spec.has(TensorName::dgamma) ? spec.dtype_of(TensorName::dgamma) : DType::f32;
  if (t == DType::f32 && dgamma == DType::f32) return {spec};  // nothing in 16 bits to round to
  const auto at = [&](RoundingPoint p) { return spec.rounding_at(p); };
  PointOptions options;
  for (auto& o : options) o = {std::nullopt};
  options[index(RoundingPoint::xhat)] = not_or_rounded({t}, at(RoundingPoint::xhat));
  if (weighted) {
    options[index(RoundingPoint::dyw)] = not_or_rounded({t}, at(RoundingPoint::dyw));
    options[index(RoundingPoint::dw_row)] = not_or_rounded({t, dgamma}, at(RoundingPoint::dw_row));
  }
  std::vector<OpSpec> out = each_rounding(bare, options);
  out = with_each(out, not_or_rounded({t}, spec.acc), [](OpSpec& c, std::optional<DType> a) { c.acc = a; });
  if (spec.reduce) {
    // a partial not rounded is a float32 one
    const DType declared = spec.reduce->partial;
    out = with_each(out, not_or_rounded({t, dgamma}, declared == DType::f32 ? std::nullopt : std::optional(declared)),
                    [](OpSpec& c, std::optional<DType> p) { c.reduce->partial = p.value_or(DType::f32); });
  }
  return out;
}

}  // namespace

std::vector<OpSpec> candidate_policies(const OpSpec& spec) {
  const DType t = spec.dtype_of(TensorName::x);
  if (spec.linear) return {spec};
  if (spec.direction == Direction::bwd) return candidate_policies_bwd(spec, t);
  if (t == DType::f32) return {spec};
  return candidate_policies_fwd(spec, t);
}

bool policy_within(const OpSpec& inner, const OpSpec& outer) {
  if (inner.direction != Direction::bwd || outer.direction != Direction::bwd) return false;
  if (!(backward_interface(inner) == backward_interface(outer))) return false;
  const auto within = [](std::optional<DType> a, std::optional<DType> b) { return !a || a == b; };
  for (std::size_t p = 0; p < kRoundingPointCount; ++p)
    if (!within(inner.round[p], outer.round[p])) return false;
  const auto partial = [](const OpSpec& s) -> std::optional<DType> {
    if (!s.reduce || s.reduce->partial == DType::f32) return std::nullopt;
    return s.reduce->partial;
  };
  return within(inner.acc, outer.acc) && within(partial(inner), partial(outer));
}

std::vector<OpSpec> cast_variants(const OpSpec& spec) {
  if (!spec.quant) return {};
  std::vector<OpSpec> out;
  const auto variant = [&](auto change) {
    OpSpec v = spec;
    change(*v.quant);
    out.push_back(v);
  };
  if (spec.quant->cast.format == QuantFormat::int8) {
    variant([](Quantization& q) { q.cast.ties_away = !q.cast.ties_away; });
    variant([](Quantization& q) { q.cast.symmetric = !q.cast.symmetric; });
  } else {
    variant([](Quantization& q) { q.cast.saturate = !q.cast.saturate; });
  }
  for (const ScaleApply a : {ScaleApply::inverse, ScaleApply::divide, ScaleApply::multiply})
    if (a != spec.quant->apply && (a != ScaleApply::multiply || !spec.quant->dynamic()))
      variant([a](Quantization& q) { q.apply = a; });
  return out;
}

namespace {

// The backward policies projects ship (docs/ops.md, "A backward's policy"),
// by their rounding points {xhat, dyw, dw_row} as bits, the weight, `add`,
// and whether dgamma and dbeta are summed in two stages (reduce=). Every one
// keeps its sums in float32: no `acc`, float32 partials.
std::string_view known_backward_name(const OpSpec& policy) {
  const auto has = [&](RoundingPoint p) { return policy.rounding_at(p).has_value(); };
  const int points = has(RoundingPoint::xhat) | has(RoundingPoint::dyw) << 1 | has(RoundingPoint::dw_row) << 2;
  if (policy.acc || (policy.reduce && policy.reduce->partial != DType::f32)) return "";
  struct Known {
    std::optional<NormKind> norm;  // empty: either norm
    int points;
    Weight weight;
    bool add;
    std::optional<bool> two_stages;  // empty: either
    std::string_view name;
  };
  static constexpr Known kKnown[] = {
      {NormKind::rmsnorm, 7, Weight::gamma, false, std::nullopt,
       "x r, w dy and each row's dW term rounded (Liger-Kernel RMSNorm backward, llama mode)"},
      {NormKind::rmsnorm, 0, Weight::one_plus_gamma, false, std::nullopt,
       "w = 1 + gamma in float32, one rounding at each output (Liger-Kernel RMSNorm backward, gemma mode)"},
      {NormKind::layernorm, 0, Weight::gamma, false, true,
       "float32 partials of dgamma and dbeta over blocks of rows, then their sum (Apex LayerNorm backward)"},
      {std::nullopt, 0, Weight::gamma, true, std::nullopt,
       "dx plus the residual stream's gradient, one rounding at each output (flash-attention's fused add backward)"},
  };
  for (const Known& k : kKnown)
    if ((!k.norm || *k.norm == policy.norm) && k.points == points && k.weight == policy.weight &&
        k.add == policy.add && (!k.two_stages || *k.two_stages == policy.reduce.has_value()))
      return k.name;
  return "";
}

}  // namespace

std::string_view known_policy_name(const OpSpec& policy) {
  if (policy.direction == Direction::bwd) return known_backward_name(policy);
  // By rounding points, `sum` aside: {r, xhat, weight, scaled} as bits.
  const auto has = [&](RoundingPoint p) { return policy.rounding_at(p).has_value(); };
  const int points = has(RoundingPoint::r) | has(RoundingPoint::xhat) << 1 | has(RoundingPoint::weight) << 2 |
                     has(RoundingPoint::scaled) << 3;
  const std::optional<DType> sum = policy.rounding_at(RoundingPoint::sum);
  const bool sum_stored = sum && *sum == policy.dtype_of(TensorName::residual_out);
  if (policy.add && !sum) return "";  // an exact sum: no kernel in float32 arithmetic reads one
  if (policy.quant) {  // where the value the cast reads was rounded
    const bool y_rounded = policy.dtype_of(TensorName::y) != DType::f32;
    if (policy.norm == NormKind::rmsnorm && points == 2 && y_rounded && (!policy.add || sum_stored || sum == DType::f32))
      return "x r and y rounded to the activations' format, then cast (vLLM's quantizing RMSNorm kernels)";
    if (points == 0 && !y_rounded)
      return policy.quant->apply == ScaleApply::multiply
                 ? "the float32 value times the scale, cast (TransformerEngine's fp8 norms)"
                 : "the float32 value cast, no rounding before it";
    return "";
  }
  struct Known {
    std::optional<NormKind> norm;  // empty: either norm
    int points;
    bool add, sum_stored;
    std::string_view name;
  };
  static constexpr Known kKnown[] = {
      {std::nullopt, 0, false, false,
       "one rounding at the output (PyTorch, TransformerEngine, FlashInfer, Gemma's RMSNorm)"},
      {NormKind::rmsnorm, 2, false, false,
       "x r rounded before the weight (Hugging Face LlamaRMSNorm, vLLM rms_norm, Liger llama)"},
      {NormKind::rmsnorm, 3, false, false, "r and x r rounded (DeepSpeed inference rms_norm)"},
      {NormKind::layernorm, 10, false, false, "xhat and gamma xhat rounded (Apex all-16-bit LayerNorm)"},
      {NormKind::rmsnorm, 2, true, true,
       "normalizes the stored sum, x r rounded before the weight (vLLM fused_add_rms_norm)"},
      {NormKind::rmsnorm, 0, true, false,
       "normalizes the float32 sum, one rounding at the output (FlashInfer fused_add_rmsnorm)"},
  };
  for (const Known& k : kKnown)
    if ((!k.norm || *k.norm == policy.norm) && k.points == points && k.add == policy.add &&
        (!k.add || k.sum_stored == sum_stored))
      return k.name;
  return "";
}

std::vector<PolicyMatch> identify_fwd(const OpSpec& declared, std::span<const SpecInputs> inputs,
                                      std::span<const SpecOutputs> outputs, BoundFn bound) {
  if (inputs.size() != outputs.size()) throw std::invalid_argument("identify_fwd: one output per problem");
  std::vector<PolicyMatch> matches;
  // the exact references depend only on the `sum` rounding: computed once per problem and sum option
  std::map<std::pair<std::size_t, int>, SpecForwardReference> references;
  const auto reference = [&](const OpSpec& policy, std::size_t p) -> const SpecForwardReference& {
    const std::optional<DType> sum = policy.rounding_at(RoundingPoint::sum);
    const int sum_key = sum ? static_cast<int>(*sum) : -1;
    auto it = references.find({p, sum_key});
    if (it == references.end())
      it = references.emplace(std::pair{p, sum_key}, spec_reference_fwd(sum_only(policy), inputs[p], SpecResult::policy))
               .first;
    return it->second;
  };
  // the declared policy's ranges, which a candidate must bound where they do not admit the outputs
  std::vector<SpecAdmissible> declared_ranges;
  for (std::size_t p = 0; p < inputs.size(); ++p)
    declared_ranges.push_back(admissible_from(declared, inputs[p], reference(declared, p), bound));
  for (const OpSpec& policy : candidate_policies(declared)) {
    PolicyMatch m{policy, {}};
    for (std::size_t p = 0; p < inputs.size(); ++p) {
      const PolicyCheck c = check_policy(policy, admissible_from(policy, inputs[p], reference(policy, p), bound),
                                         outputs[p], &declared_ranges[p]);
      m.check.vacuous += c.vacuous;
      if (m.check.outside == 0 && c.outside > 0) {
        m.check.first_output = c.first_output;
        m.check.first_index = c.first_index;
        m.check.first_value = c.first_value;
        m.check.first_lo = c.first_lo;
        m.check.first_hi = c.first_hi;
      }
      m.check.outside += c.outside;
      m.check.checked += c.checked;
    }
    matches.push_back(std::move(m));
  }
  return matches;
}

}  // namespace normcheck
