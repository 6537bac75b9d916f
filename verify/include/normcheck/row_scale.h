// The scale of each row of a problem as a kernel sees it: what the domain's
// row terms (kernel.h, InputRange: |mean|/sigma<=K, sigma>=S) and the fuzz
// input classes read. The one place |mean|/sigma is computed.
#pragma once

#include <span>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck {

// The norm's input as the kernel sees it: x in its spec's format, or for a
// forward spec that adds a residual (op_spec.h, `add`) s = x + residual, the
// sum the kernel normalizes (norm_input: stored where the spec rounds it). A
// non-finite x or residual, or a stored sum past its format's range, makes s
// non-finite.
std::vector<float> norm_inputs(const Kernel& kernel, const Problem& problem);

// One RowScale per row of norm_inputs(kernel, problem), from the reference's
// exact mean and variance (mean(x^2) for RMSNorm ops), each correctly rounded
// to double: |mean|/sigma is then within a few units of 2^-53 of the exact
// ratio, relative (a row that close to a term's limit may fall on either side).
std::vector<RowScale> row_scales(const Kernel& kernel, const Problem& problem);

// The same for rows x cols values `s` that are the norm's input of `op`.
std::vector<RowScale> row_scales(Op op, std::span<const float> s, int64_t rows, int64_t cols, float eps);

// The RowScale of one row of `op` from the reference's statistics of its
// norm's input (RowStats: finite, mean, variance), as row_scales() takes it.
RowScale row_scale(Op op, const RowStats& stats);

// Whether `op` subtracts the mean (a LayerNorm), where |mean|/sigma is the
// condition of the subtraction.
bool centred(Op op);

}  // namespace normcheck
