// The element checks of evaluate(): one computed value against its exact
// value and allowance (evaluate.cpp's header states the rules), folded into an
// Evaluation's figures and worst element.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "simd/thread_pool.h"

namespace normcheck::evaluation {

class Tally {
 public:
  // `rule`: how elements reached by a non-finite input are judged.
  Tally(Evaluation& ev, NonFinite rule) : ev_(ev), rule_(rule) {}

  // An element held to its allowance. `ulp_scale`: for a main output (y, dx,
  // dgamma, dbeta, z) the row's scale its ULP figure is taken at
  // (scaled_ulp_error in `dtype`, metrics.h); nullopt for the statistics,
  // which have no ULP figure.
  // (`ulp_scale` is taken by reference: an optional built by value for the
  // call has its engaged byte stored and then loaded back as part of a word,
  // a store-forwarding stall on every element.)
  void element(const char* output, int64_t row, int64_t col, float computed, double exact,
               double allowed, DType dtype, const std::optional<double>& ulp_scale);

  // An element of y, dx, z or rstd/rrms on a row with a non-finite input:
  // the row-NaN convention gives NaN there, the IEEE evaluation `ieee`
  // (nullopt: non-finite). Held to the rule; its convention is recorded.
  void nonfinite_row_element(const char* output, int64_t row, int64_t col, float computed,
                             std::optional<double> ieee);

  // An element whose exact value is non-finite and whose kind (NaN, +inf,
  // -inf) depends on the algorithm's roundings (the mean of a row with a
  // non-finite x; a dgamma column where an infinite dy meets an xhat of a
  // sign the bound does not fix): any NaN or infinity is admitted, under both
  // rules, and a finite value is not.
  void nonfinite_element(const char* output, int64_t row, int64_t col, float computed, double exact);

  // An element held to the range of values of its format a spec's rounding
  // policy admits (spec_policy.h: [lo, hi], ends of the format; NaN ends: the
  // element must be NaN). Its ratio is measured from m, the exact value
  // brought into the range (clamped to [lo, hi]): |computed - m| over the
  // range's reach from m on computed's side plus half the gap to the next
  // value of the format beyond that end. It is below 1 inside the range and
  // above 1 at every value outside, and where the range is wide against the
  // format's spacing it is |computed - exact| / allowance, the figure of an
  // allowance around the exact value. An infinite end admits every value
  // beyond the other end (the policy's overflow). `exact` is the op's exact
  // value, also for the ULP figure against exact math; the element is recorded
  // (Worst, OutputError) with it and the reach on computed's side as its
  // allowance.
  void range_element(const char* output, int64_t row, int64_t col, float computed, double lo, double hi,
                     double exact, DType dtype, const std::optional<double>& ulp_scale);

  // range_element() for the elements j of one row of an output: computed[j]
  // against [lo[j], hi[j]] and exact[j], with ULP figures at ulp_scale[j]
  // (nullptr: none). The figures, worst element and counts are those of
  // range_element called for j in order. A row where every value is finite
  // has its figures computed in vectors (finite_row_figures, tally.cpp), its
  // output's entry found once and its maxima recorded once; any other row is
  // taken element by element.
  void range_row(const char* output, int64_t row, std::span<const float> computed, const double* lo,
                 const double* hi, const double* exact, DType dtype, const double* ulp_scale);

  // An element of a quantized y (op_spec.h, Quantization): `computed` is
  // its code's value, [lo, hi] the codes admitted (spec_policy.h; +-inf ends
  // an overflow of the cast, both infinite: nothing promised), `exact_t` the
  // exact y over the scale. The figure is range_element's on the format's
  // code line (quant_position: consecutive codes one apart): |c - m| over
  // the range's reach from m plus half a code, m the exact t brought into the
  // range, so a neighbour of a one-code range scores 2. The ULP figure is the
  // distance in codes from the code exact math casts to. A NaN code (fp8)
  // where the range holds values is outside it: +inf, not a non-finite
  // mismatch, since the inputs are finite and the cast had a value to give.
  void code_element(const char* output, int64_t row, int64_t col, float computed, double lo, double hi,
                    double exact_t, const QuantCast& cast);

  // An element of a quantized y whose t is not finite: its y is NaN (a row
  // with a non-finite input, a NaN gamma), or its scale is NaN. The format's
  // non-finite codes (computed NaN or +-inf) follow the row-NaN convention;
  // `ieee` is the code the IEEE evaluation gives where it is finite (0: an
  // RMSNorm y of +-0 on a row of infinities, cast by a finite scale); a code
  // in `declared` (nonfinite_t_codes(): nan=clamp's) stands for the NaN the
  // spec's convention writes as it. Any other finite code hides the fault.
  void nonfinite_code_element(const char* output, int64_t row, int64_t col, float computed,
                              std::optional<double> ieee, const std::vector<double>& declared);

  NonFinite rule() const { return rule_; }

  // check_row(tally, row) for every row of [0, rows), each checking
  // `row_elements` elements, in contiguous chunks of rows on the kernels'
  // thread pool, each into a Tally of its own Evaluation, merged into this
  // one in row order (merge_tally) with their elements outside counted: the
  // same figures, worst element and count as this Tally over the rows in
  // order (it keeps the first element of the largest ratio), for every
  // thread count. Fewer elements than simd::kParallelCheckElements run on
  // this thread, into this Tally.
  template <class CheckRow>
  void rows(int64_t rows, int64_t row_elements, const CheckRow& check_row) {
    rows_of(rows, row_elements, check_row, *this);
  }

  // rows() with a second Tally beside this one, for a second standard held
  // over the same elements in the same pass: check_row(tally, beside, row),
  // each chunk's elements into a fresh Evaluation of each, merged into each
  // in row order.
  template <class CheckRow>
  void rows_beside(Tally& beside, int64_t rows, int64_t row_elements, const CheckRow& check_row) {
    rows_of(rows, row_elements, check_row, *this, beside);
  }

  // The elements outside their allowance or range so far (ratio above 1, a
  // non-finite mismatch included): what a candidate policy's checks count
  // against a kernel's outputs (Evaluation::PolicyFit::outside).
  int64_t outside() const { return outside_; }

 private:
  template <class CheckRow, class... Tallies>
  static void rows_of(int64_t rows, int64_t row_elements, const CheckRow& check_row, Tallies&... into);
  OutputError& output_entry(const char* output);
  void record(const char* output, int64_t row, int64_t col, float computed, double exact, double allowed,
              double ratio, double ulp, double elementwise = 0);
  void mismatch(double& ratio);
  Evaluation& ev_;
  NonFinite rule_;
  int64_t outside_ = 0;
  const char* last_output_ = nullptr;  // output_entry(): the last name asked for, and its entry's index
  std::size_t last_entry_ = 0;
  // range_row's per-element figures, kept from row to row (a Tally checks
  // the rows of one chunk): no allocation per row once they are as long as one.
  std::vector<double> ratio_, allowed_, ulp_, elementwise_;
};

// ulp_figures (metrics.h) of the elements j of a row, computed[j] against
// exact[j] at scale[j], into scaled[j] and elementwise[j]: the same values,
// computed in vectors where ulp_error has its closed form (float_format.h)
// and by ulp_figures elsewhere.
void row_ulp_figures(DType t, std::span<const float> computed, const double* exact, const double* scale,
                     double* scaled, double* elementwise);

// What Tally leaves in `ev` after the elements of `part`'s chunk, when `part`
// was tallied from a fresh Evaluation: per output and overall the larger ULP
// errors (both figures) and the worst element if its ratio is larger (strictly: the first of
// equal ratios stays) or `ev` has none yet, any mismatch, and the combined
// non-finite convention.
void merge_tally(Evaluation& ev, const Evaluation& part);

template <class CheckRow, class... Tallies>
void Tally::rows_of(int64_t rows, int64_t row_elements, const CheckRow& check_row, Tallies&... into) {
  const int64_t chunks = simd::check_chunks(rows, row_elements);
  if (chunks <= 1) {
    for (int64_t row = 0; row < rows; ++row) check_row(into..., row);
    return;
  }
  constexpr std::size_t kTallies = sizeof...(Tallies);
  std::vector<std::array<Evaluation, kTallies>> parts(static_cast<std::size_t>(chunks));
  std::vector<std::array<int64_t, kTallies>> outside(static_cast<std::size_t>(chunks));
  simd::parallel_for(chunks, [&](int64_t c) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::array<Evaluation, kTallies>& part = parts[static_cast<std::size_t>(c)];
      Tally local[] = {Tally(part[I], into.rule_)...};
      for (int64_t row = simd::chunk_first_row(rows, chunks, c); row < simd::chunk_first_row(rows, chunks, c + 1);
           ++row)
        check_row(local[I]..., row);
      ((outside[static_cast<std::size_t>(c)][I] = local[I].outside()), ...);
    }(std::index_sequence_for<Tallies...>());
  });
  for (std::size_t c = 0; c < parts.size(); ++c)
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((merge_tally(into.ev_, parts[c][I]), into.outside_ += outside[c][I]), ...);
    }(std::index_sequence_for<Tallies...>());
}

// Tally::rows() into a fresh Tally of `ev`.
template <class CheckRow>
void tally_rows(Evaluation& ev, NonFinite rule, int64_t rows, int64_t row_elements, const CheckRow& check_row) {
  Tally(ev, rule).rows(rows, row_elements, check_row);
}

}  // namespace normcheck::evaluation
