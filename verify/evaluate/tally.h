// The element checks of evaluate(): one computed value against its exact
// value and allowance (evaluate.cpp's header states the rules), folded into an
// Evaluation's figures and worst element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
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
  void element(const char* output, int64_t row, int64_t col, float computed, double exact,
               double allowed, DType dtype, std::optional<double> ulp_scale);

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
                     double exact, DType dtype, std::optional<double> ulp_scale);

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
  void rows(int64_t rows, int64_t row_elements, const CheckRow& check_row);

  // The elements outside their allowance or range so far (ratio above 1, a
  // non-finite mismatch included): what a candidate policy's checks count
  // against a kernel's outputs (Evaluation::PolicyFit::outside).
  int64_t outside() const { return outside_; }

 private:
  OutputError& output_entry(const char* output);
  void record(const char* output, int64_t row, int64_t col, float computed, double exact, double allowed,
              double ratio, double ulp, double elementwise = 0);
  void mismatch(double& ratio);
  Evaluation& ev_;
  NonFinite rule_;
  int64_t outside_ = 0;
  const char* last_output_ = nullptr;  // output_entry(): the last name asked for, and its entry's index
  std::size_t last_entry_ = 0;
};

// What Tally leaves in `ev` after the elements of `part`'s chunk, when `part`
// was tallied from a fresh Evaluation: per output and overall the larger ULP
// errors (both figures) and the worst element if its ratio is larger (strictly: the first of
// equal ratios stays) or `ev` has none yet, any mismatch, and the combined
// non-finite convention.
void merge_tally(Evaluation& ev, const Evaluation& part);

template <class CheckRow>
void Tally::rows(int64_t rows, int64_t row_elements, const CheckRow& check_row) {
  const int64_t chunks = simd::check_chunks(rows, row_elements);
  if (chunks <= 1) {
    for (int64_t row = 0; row < rows; ++row) check_row(*this, row);
    return;
  }
  std::vector<Evaluation> parts(static_cast<std::size_t>(chunks));
  std::vector<int64_t> outside(static_cast<std::size_t>(chunks), 0);
  simd::parallel_for(chunks, [&](int64_t c) {
    Tally tally(parts[static_cast<std::size_t>(c)], rule_);
    for (int64_t row = simd::chunk_first_row(rows, chunks, c); row < simd::chunk_first_row(rows, chunks, c + 1); ++row)
      check_row(tally, row);
    outside[static_cast<std::size_t>(c)] = tally.outside();
  });
  for (std::size_t c = 0; c < parts.size(); ++c) {
    merge_tally(ev_, parts[c]);
    outside_ += outside[c];
  }
}

// Tally::rows() into a fresh Tally of `ev`.
template <class CheckRow>
void tally_rows(Evaluation& ev, NonFinite rule, int64_t rows, int64_t row_elements, const CheckRow& check_row) {
  Tally(ev, rule).rows(rows, row_elements, check_row);
}

}  // namespace normcheck::evaluation
