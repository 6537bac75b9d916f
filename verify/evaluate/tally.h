// The element checks of evaluate(): one computed value against its exact
// value and allowance (evaluate.cpp's header states the rules), folded into an
// Evaluation's figures and worst element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "normcheck/evaluate.h"
#include "simd/thread_pool.h"

namespace normcheck::evaluation {

class Tally {
 public:
  explicit Tally(Evaluation& ev) : ev_(ev) {}

  // `main`: y or dx, dgamma, dbeta (their ULP error in `dtype` is recorded).
  void element(const char* output, int64_t row, int64_t col, float computed, double exact,
               double allowed, bool main, DType dtype);

 private:
  OutputError& output_entry(const char* output);
  void mismatch(double& ratio);
  Evaluation& ev_;
};

// What Tally leaves in `ev` after the elements of `part`'s chunk, when `part`
// was tallied from a fresh Evaluation: the larger ULP error, any mismatch, and
// the chunk's worst element if its ratio is larger (strictly: the first of
// equal ratios stays) or `ev` has none yet.
void merge_tally(Evaluation& ev, const Evaluation& part);

// check_row(tally, row) for every row, in contiguous chunks of rows on the
// kernels' thread pool, each into its own Evaluation, merged in row order:
// the same figures and the same worst element as one Tally over the rows in
// order (Tally keeps the first element of the largest ratio), for every
// thread count.
template <class CheckRow>
void tally_rows(Evaluation& ev, int64_t rows, const CheckRow& check_row) {
  const int64_t chunks = std::min<int64_t>(rows, 4 * simd::thread_count());
  if (chunks <= 1) {
    Tally tally(ev);
    for (int64_t row = 0; row < rows; ++row) check_row(tally, row);
    return;
  }
  std::vector<Evaluation> parts(static_cast<std::size_t>(chunks));
  simd::parallel_for(chunks, [&](int64_t c) {
    Tally tally(parts[static_cast<std::size_t>(c)]);
    for (int64_t row = rows * c / chunks; row < rows * (c + 1) / chunks; ++row) check_row(tally, row);
  });
  for (const Evaluation& part : parts) merge_tally(ev, part);
}

}  // namespace normcheck::evaluation
