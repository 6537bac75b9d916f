#include "tally.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "nonfinite.h"
#include "normcheck/float_format.h"
#include "normcheck/metrics.h"
#include "simd/vector_clones.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

void Tally::element(const char* output, int64_t row, int64_t col, float computed, double exact,
                    double allowed, DType dtype, const std::optional<double>& ulp_scale) {
  double ratio = 0, ulp = 0, elementwise = 0;
  if (allowed == kInf) {
    // the bound promises nothing for this element (evaluate.h)
  } else if (std::isnan(exact)) {
    if (!std::isnan(computed)) mismatch(ratio);
  } else if (std::isinf(exact)) {
    if (static_cast<double>(computed) != exact) mismatch(ratio);
  } else if (std::isnan(allowed)) {
    // an infinite scale, which only a non-finite input makes (exact non-finite above)
  } else if (std::isinf(computed)) {
    // The bound is derived without overflow: a computation within the
    // allowance of the exact value may go beyond the output format's
    // largest finite value on the side where exact +- allowance does, and
    // round to that infinity (allowance 0: an exact value beyond the range;
    // f16's ends at 65504, so a large gamma or a large dx overflows it).
    const double largest = largest_finite(dtype);
    if (!(computed > 0 ? exact + allowed > largest : exact - allowed < -largest)) mismatch(ratio);
  } else if (!std::isfinite(computed)) {
    mismatch(ratio);
  } else {
    const double error = std::fabs(static_cast<double>(computed) - exact);
    ratio = error == 0 ? 0 : error / allowed;  // x / 0 = +inf
    // the only elements with ULP figures: finite against finite, held to an allowance
    if (ulp_scale) {
      const UlpFigures f = ulp_figures(dtype, computed, exact, *ulp_scale);
      ulp = f.scaled;
      elementwise = f.elementwise;
    }
  }
  record(output, row, col, computed, exact, allowed, ratio, ulp, elementwise);
}

namespace {

// The spacing of format f's values in the binade of exponent e, taken within
// [min_exp, max_exp] as spacing() does (float_format.h), from its bits. The
// loops below take it rather than spacing(): spacing()'s choice of format and
// its NaN case keep GCC from vectorizing them.
inline double spacing_at(int64_t e, int64_t min_exp, int64_t max_exp, int64_t precision) {
  e = e < min_exp ? min_exp : e > max_exp ? max_exp : e;
  return std::bit_cast<double>(static_cast<uint64_t>(e - precision + 1 + 1023) << 52);
}
// The unbiased exponent of a normal double (below the normal range, -1023).
inline int64_t exponent_of(double v) {
  return static_cast<int64_t>((std::bit_cast<uint64_t>(v) >> 52) & 0x7ff) - 1023;
}

// range_element's figures for finite elements (its rule in tally.h), in
// vectors: ratio[j], and allowed[j] the reach it is measured against.
//   Beyond an end v of the range the rule takes half the gap to the next
// value of the format: the spacing at v (spacing(), float_format.h), or one
// binade lower where v is a power of two and the next value lies toward
// zero; at v = 0 either way gives the spacing at min_exp, which the clamp
// keeps. Every other operation (the clamp as max and min, (hi - m) + gap / 2
// with gap / 2 exact, the division) gives one result in every clone, in
// vectors or not.
NORMCHECK_VECTOR_CLONES
void finite_row_figures(std::size_t n, const float* computed, const double* lo, const double* hi,
                        const double* exact, FloatFormat f, double* ratio, double* allowed) {
  const int64_t min_exp = f.min_exp, max_exp = f.max_exp, precision = f.precision;
  for (std::size_t j = 0; j < n; ++j) {
    const double c = computed[j], l = lo[j], h = hi[j];
    const double m = std::min(std::max(exact[j], l), h);
    const uint64_t h_bits = std::bit_cast<uint64_t>(h), l_bits = std::bit_cast<uint64_t>(l);
    // toward zero from a power of two (0 too: the clamp keeps min_exp)
    const int64_t h_down = (h < 0 || h_bits << 1 == 0) && (h_bits << 12) == 0 ? 1 : 0;
    const int64_t l_down = (l > 0 || l_bits << 1 == 0) && (l_bits << 12) == 0 ? 1 : 0;
    const double up = (h - m) + spacing_at(exponent_of(h) - h_down, min_exp, max_exp, precision) / 2;
    const double down = (m - l) + spacing_at(exponent_of(l) - l_down, min_exp, max_exp, precision) / 2;
    const double a = c >= m ? up : down;
    ratio[j] = std::fabs(c - m) / a;
    allowed[j] = a;
  }
}

// ulp_figures (metrics.h) in vectors for the elements whose computed and
// exact values share a binade of float's normal range (ulp_error's closed
// form, float_format.h; f32 and bf16, whose lines are float's): scaled[j] and
// elementwise[j]. The others' are wrong here and left to row_ulp_figures'
// second loop, which tells them apart by the same test; returns how many
// there are (none, on most rows: then there is no second loop).
NORMCHECK_VECTOR_CLONES
int64_t closed_form_ulp_figures(std::size_t n, const float* computed, const double* exact, const double* scale,
                                FloatFormat f, double line_unit, double* scaled, double* elementwise) {
  const int64_t min_exp = f.min_exp, max_exp = f.max_exp, precision = f.precision;
  int64_t others = 0;
  for (std::size_t j = 0; j < n; ++j) {
    using namespace float_format_detail;
    const double c = computed[j], e = exact[j], s = scale[j];
    const uint64_t head = std::bit_cast<uint64_t>(c) >> 52;
    const double ulps = one_binade_ulps(c, e, head) * line_unit;  // line_unit: bf16's ULP is 2^16 float ULPs
    const double in_scale =
        std::fabs(c - e) * inverse_power_of_two(spacing_at(exponent_of(s), min_exp, max_exp, precision));
    elementwise[j] = ulps;
    scaled[j] = s > 0 ? std::min(ulps, in_scale) : ulps;  // ulp_figures (metrics.h)
    others += in_one_float_binade(head, e) ? 0 : 1;
  }
  return others;
}

// The largest of n >= 1 non-negative doubles (no NaN), and how many exceed
// `above`, in vectors: the maximum is taken on their bits as signed 64-bit
// integers, whose order is theirs (the sign bit is clear). GCC vectorizes an
// integer maximum, and not a double's (its NaN and signed-zero cases).
struct Largest {
  double value;
  int64_t above;
};
NORMCHECK_VECTOR_CLONES
Largest largest_of(std::size_t n, const double* v, double above) {
  int64_t bits = 0, count = 0;
  for (std::size_t j = 0; j < n; ++j) {
    bits = std::max(bits, std::bit_cast<int64_t>(v[j]));
    count += v[j] > above ? 1 : 0;
  }
  return {std::bit_cast<double>(bits), count};
}

}  // namespace

void row_ulp_figures(DType t, std::span<const float> computed, const double* exact, const double* scale,
                     double* scaled, double* elementwise) {
  const std::size_t n = computed.size();
  const bool float_line = t != DType::f16;
  if (float_line && closed_form_ulp_figures(n, computed.data(), exact, scale, float_format(t),
                                            t == DType::bf16 ? 0x1p-16 : 1.0, scaled, elementwise) == 0)
    return;
  for (std::size_t j = 0; j < n; ++j) {
    const uint64_t head = std::bit_cast<uint64_t>(static_cast<double>(computed[j])) >> 52;
    if (float_line && float_format_detail::in_one_float_binade(head, exact[j])) continue;
    const UlpFigures u = ulp_figures(t, computed[j], exact[j], scale[j]);
    scaled[j] = u.scaled;
    elementwise[j] = u.elementwise;
  }
}

void Tally::range_element(const char* output, int64_t row, int64_t col, float computed, double lo, double hi,
                          double exact, DType dtype, const std::optional<double>& ulp_scale) {
  double ratio = 0, ulp = 0, elementwise = 0;
  double middle = std::isinf(lo) ? hi : std::isinf(hi) ? lo : lo / 2 + hi / 2, allowed = kInf;
  const double c = computed;
  if (std::isnan(lo) || std::isnan(hi)) {
    middle = kNaN;
    if (!std::isnan(computed)) mismatch(ratio);
  } else if (std::isnan(computed)) {
    if (!(lo == -kInf && hi == kInf)) mismatch(ratio);
  } else if (std::isinf(lo) || std::isinf(hi)) {
    // beyond the format's range on one side: admitted there; otherwise every
    // value up to the finite end (nothing promised when both ends are infinite)
    const bool admitted = (lo == -kInf && c <= hi) || (hi == kInf && c >= lo);
    if (!admitted) ratio = std::isinf(c) ? kInf : 2;  // a finite value beyond a finite end: one past it at least
    if (!admitted && std::isinf(c)) ev_.nonfinite_mismatch = true;
  } else if (std::isinf(computed)) {
    mismatch(ratio);
  } else {
    // the exact value, or without one the middle, brought into the range there
    const double towards = std::isfinite(exact) ? exact : middle;
    finite_row_figures(1, &computed, &lo, &hi, &towards, float_format(dtype), &ratio, &allowed);
    if (ulp_scale && std::isfinite(exact)) {
      const UlpFigures f = ulp_figures(dtype, computed, exact, *ulp_scale);
      ulp = f.scaled;
      elementwise = f.elementwise;
    }
    if (std::isfinite(exact)) middle = exact;  // recorded as the exact value
  }
  record(output, row, col, computed, middle, allowed, ratio, ulp, elementwise);
}

void Tally::range_row(const char* output, int64_t row, std::span<const float> computed, const double* lo,
                      const double* hi, const double* exact, DType dtype, const double* ulp_scale) {
  const std::size_t n = computed.size();
  bool finite = true;
  for (std::size_t j = 0; j < n; ++j)
    finite = finite && std::isfinite(computed[j]) && std::isfinite(lo[j]) && std::isfinite(hi[j]) &&
             std::isfinite(exact[j]);
  if (!finite) {
    for (std::size_t j = 0; j < n; ++j)
      range_element(output, row, static_cast<int64_t>(j), computed[j], lo[j], hi[j], exact[j], dtype,
                    ulp_scale ? std::optional<double>(ulp_scale[j]) : std::nullopt);
    return;
  }
  if (n == 0) return;
  for (std::vector<double>* v : {&ratio_, &allowed_, &ulp_, &elementwise_}) v->resize(std::max(v->size(), n));
  const double *ratio = ratio_.data(), *ulp = ulp_.data(), *elementwise = elementwise_.data();
  finite_row_figures(n, computed.data(), lo, hi, exact, float_format(dtype), ratio_.data(), allowed_.data());
  if (ulp_scale) row_ulp_figures(dtype, computed, exact, ulp_scale, ulp_.data(), elementwise_.data());
  // The row's maxima, each at the first element that reaches it: what
  // record() keeps of the elements in order (a later element replaces only a
  // strictly larger figure). Every figure of a finite row is finite and
  // non-negative: the maxima in vectors, then the first element equal to each.
  const Largest largest_ratio = largest_of(n, ratio, 1);
  const int64_t outside = largest_ratio.above;
  const double worst_ratio = largest_ratio.value;
  const auto worst = static_cast<std::size_t>(std::find(ratio, ratio + n, worst_ratio) - ratio);
  const double worst_allowed = allowed_[worst];
  double max_ulp = 0, max_elementwise = 0;  // no ULP figures: 0, as range_element records
  std::size_t ulp_at = 0;
  if (ulp_scale) {
    max_ulp = largest_of(n, ulp, 0).value;
    ulp_at = static_cast<std::size_t>(std::find(ulp, ulp + n, max_ulp) - ulp);
    max_elementwise = largest_of(n, elementwise, 0).value;
  }
  outside_ += outside;
  ev_.max_ulp = std::max(ev_.max_ulp, max_ulp);
  ev_.max_ulp_elementwise = std::max(ev_.max_ulp_elementwise, max_elementwise);
  OutputError& out = output_entry(output);
  if (max_ulp > out.max_ulp) {
    out.max_ulp = max_ulp;
    out.max_ulp_exact = exact[ulp_at];
  }
  out.max_ulp_elementwise = std::max(out.max_ulp_elementwise, max_elementwise);
  if (worst_ratio > out.max_error_over_bound) {
    out.max_error_over_bound = worst_ratio;
    out.row = row;
    out.col = static_cast<int64_t>(worst);
  }
  if (worst_ratio > ev_.max_error_over_bound || ev_.worst.output.empty()) {
    ev_.max_error_over_bound = worst_ratio;
    ev_.worst = {output, row, static_cast<int64_t>(worst), computed[worst], exact[worst], worst_allowed};
  }
}

void Tally::code_element(const char* output, int64_t row, int64_t col, float computed, double lo, double hi,
                         double exact_t, const QuantCast& cast) {
  if (lo == -kInf && hi == kInf) {  // nothing promised
    record(output, row, col, computed, exact_t, kInf, 0, 0);
    return;
  }
  double ratio = 0;
  const double exact_code = std::isnan(exact_t) ? kNaN : quant_cast(cast, exact_t);
  if (std::isnan(computed)) {  // a NaN code where the cast gives a value: a code outside the range
    record(output, row, col, computed, exact_t, 0, kInf, kInf);
    return;
  }
  // positions on the code line; an infinite end is the overflow value, one past the largest code
  const auto position = [&](double v) { return quant_position(cast.format, v); };
  const double c = position(computed), p_lo = position(lo), p_hi = position(hi);
  const double m = std::isfinite(exact_t) ? std::clamp(position(exact_t), p_lo, p_hi) : p_lo / 2 + p_hi / 2;
  const double allowed = (c >= m ? p_hi - m : m - p_lo) + 0.5;
  ratio = c == m ? 0 : std::fabs(c - m) / allowed;
  const double off = std::isnan(exact_code) ? 0 : std::fabs(c - position(exact_code));
  record(output, row, col, computed, exact_t, allowed, ratio, off, off);  // codes: both figures the distance in codes
}

void Tally::nonfinite_row_element(const char* output, int64_t row, int64_t col, float computed,
                                  std::optional<double> ieee) {
  const NonFiniteConvention c = convention_of(computed, ieee);
  ev_.nonfinite_convention = combine(ev_.nonfinite_convention, c);
  double ratio = 0;
  if (!admitted(rule_, c)) mismatch(ratio);
  // what the rule wanted: the IEEE value where it is finite and admitted, else the row-NaN convention's NaN
  const double wanted = ieee && rule_ == NonFinite::row_nan_or_ieee ? *ieee : kNaN;
  record(output, row, col, computed, wanted, 0, ratio, 0);
}

void Tally::nonfinite_code_element(const char* output, int64_t row, int64_t col, float computed,
                                   std::optional<double> ieee, const std::vector<double>& declared) {
  const double c = computed;
  const bool stands_for_nan = !(ieee && c == *ieee) && std::find(declared.begin(), declared.end(), c) != declared.end();
  const NonFiniteConvention convention = convention_of(stands_for_nan ? NAN : computed, ieee);
  ev_.nonfinite_convention = combine(ev_.nonfinite_convention, convention);
  double ratio = 0;
  if (!admitted(rule_, convention)) mismatch(ratio);
  record(output, row, col, computed, ieee && rule_ == NonFinite::row_nan_or_ieee ? *ieee : kNaN, 0, ratio, 0);
}

void Tally::nonfinite_element(const char* output, int64_t row, int64_t col, float computed, double exact) {
  double ratio = 0;
  if (std::isfinite(computed)) mismatch(ratio);
  record(output, row, col, computed, exact, 0, ratio, 0);
}

void Tally::record(const char* output, int64_t row, int64_t col, float computed, double exact, double allowed,
                   double ratio, double ulp, double elementwise) {
  if (ratio > 1) ++outside_;
  ev_.max_ulp = std::max(ev_.max_ulp, ulp);
  ev_.max_ulp_elementwise = std::max(ev_.max_ulp_elementwise, elementwise);
  OutputError& out = output_entry(output);
  if (ulp > out.max_ulp) {
    out.max_ulp = ulp;
    out.max_ulp_exact = exact;
  }
  out.max_ulp_elementwise = std::max(out.max_ulp_elementwise, elementwise);
  if (ratio > out.max_error_over_bound) {
    out.max_error_over_bound = ratio;
    out.row = row;
    out.col = col;
  }
  if (ratio > ev_.max_error_over_bound || ev_.worst.output.empty()) {
    ev_.max_error_over_bound = ratio;
    ev_.worst = {output, row, col, computed, exact, allowed};
  }
}

// The outputs are named by string literals, and an output's elements come
// in runs: the entry of the last name asked for is kept by its pointer, and
// the names are compared as strings only when it changes.
OutputError& Tally::output_entry(const char* output) {
  if (output == last_output_ && last_entry_ < ev_.outputs.size()) return ev_.outputs[last_entry_];
  std::size_t k = 0;
  while (k < ev_.outputs.size() && ev_.outputs[k].output != output) ++k;
  if (k == ev_.outputs.size()) ev_.outputs.push_back({output});
  last_output_ = output;
  last_entry_ = k;
  return ev_.outputs[k];
}

void Tally::mismatch(double& ratio) {
  ev_.nonfinite_mismatch = true;
  ratio = kInf;
}

void merge_tally(Evaluation& ev, const Evaluation& part) {
  for (const OutputError& o : part.outputs) {  // in the order first met, as one Tally would
    auto it = std::find_if(ev.outputs.begin(), ev.outputs.end(),
                           [&](const OutputError& e) { return e.output == o.output; });
    if (it == ev.outputs.end()) it = ev.outputs.insert(ev.outputs.end(), OutputError{o.output});
    if (o.max_ulp > it->max_ulp) {
      it->max_ulp = o.max_ulp;
      it->max_ulp_exact = o.max_ulp_exact;
    }
    it->max_ulp_elementwise = std::max(it->max_ulp_elementwise, o.max_ulp_elementwise);
    if (o.max_error_over_bound > it->max_error_over_bound) {
      it->max_error_over_bound = o.max_error_over_bound;
      it->row = o.row;
      it->col = o.col;
    }
  }
  ev.max_ulp = std::max(ev.max_ulp, part.max_ulp);
  ev.max_ulp_elementwise = std::max(ev.max_ulp_elementwise, part.max_ulp_elementwise);
  ev.nonfinite_mismatch = ev.nonfinite_mismatch || part.nonfinite_mismatch;
  ev.nonfinite_convention = combine(ev.nonfinite_convention, part.nonfinite_convention);
  if (part.worst.output.empty()) return;  // no element in the chunk
  if (part.max_error_over_bound > ev.max_error_over_bound || ev.worst.output.empty()) {
    ev.max_error_over_bound = part.max_error_over_bound;
    ev.worst = part.worst;
  }
}

}  // namespace normcheck::evaluation
