// A kernel's main output on a problem, each element with its exact value,
// xhat and allowance as evaluate() judged it (EvaluateOptions::
// keep_main_elements). The invariant properties derive their tolerances from
// these allowances: the bound is turned into allowances in one place
// (verify/evaluate/allowance.cpp), and a run and its allowances come from one
// call with one exact reference. A backward kernel receives the forward's
// statistics of x correctly rounded to float, as evaluate() gives them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::props {

// True when the row is its op's textbook form: no spec of its own (a residual
// add, 1 + gamma, a rounding point; kernel.h, Kernel::spec). The invariants
// and the non-finite property are statements of the table's ops on x alone;
// the input of a spec that adds a residual is x + residual, which a
// transformation of x alone does not move alike. within_bound holds every row.
bool textbook_op(const Kernel& kernel);

// True when the invariants can run this row: f32 storage (their
// transformations are exact in float, not once rounded to bf16 or f16), a
// norm (a norm followed by a Linear outputs z, not a row of x's shape; the
// invariants are statements about norms), and its op's textbook form.
bool runnable(const Kernel& kernel);

// evaluate(kernel, problem) keeping the main elements. Discards the case
// (RC_PRE) when the kernel declines the problem.
Evaluation judged(const Kernel& kernel, const Problem& problem);

// The kernel's main output (y or dx), and each element's allowance: +inf
// (nothing promised) on a row evaluate() does not check and where a bound
// coefficient is +inf, 0 on a row with a non-finite input (the output must be
// NaN exactly), NaN where a non-finite input makes a scale infinite.
std::vector<float> main_values(const Evaluation& judged);
std::vector<double> main_allowances(const Evaluation& judged);

// The bound promises a finite value near the exact one for every element of
// the row: every allowance and xhat finite, and |exact| + allowance within the
// float range (beyond it a kernel may overflow to an infinity, which
// evaluate() accepts). Row-wise tolerances that sum a row's outputs skip the
// other rows.
bool row_promised(const Evaluation& judged, int64_t row, int64_t cols);

// The rows whose outputs are all promised (row_promised), in order: each(r,
// its cols main elements). The loop of the row-wise tolerances.
template <class RowFn>
void for_each_promised_row(const Evaluation& judged, int64_t rows, int64_t cols, RowFn each) {
  const std::span<const MainElement> elements(judged.main_elements);
  for (int64_t r = 0; r < rows; ++r)
    if (row_promised(judged, r, cols))
      each(r, elements.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols)));
}

}  // namespace normcheck::props
