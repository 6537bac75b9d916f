// The exact forward of any op spec (op_spec.h): the result of the op on the
// stored inputs in exact arithmetic, and the result of the spec's rounding
// policy (exact arithmetic between the rounding points, each point rounding
// its value to its format).
//
// Every value is decided by interval arithmetic (MPFR, outward rounding) at a
// working precision that doubles until each rounding it reports is proven:
// an interval that holds the real value and whose two ends round to the same
// number. A rounding point rounds the same way, so the policy's rounded
// intermediates are exact values of their formats (ties to even included:
// the exact operations of the op's numerators keep a dyadic value a point).
// docs/ops.md states the stages and the derivation; no Boost type appears here.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "normcheck/op_spec.h"
#include "normcheck/reference.h"

namespace normcheck {

// The stored inputs of a forward problem, row-major rows x cols. Each array
// holds values of its tensor's dtype in the spec (a bf16 or f16 value widened
// to float, which is exact). gamma empty: the weight is 1 (gamma = 1, or
// gamma = 0 under weight=1+gamma); beta empty: 0; residual: the spec's
// residual when it has `add`, empty otherwise.
struct SpecInputs {
  int64_t rows = 0, cols = 0;
  std::span<const float> x, residual, gamma, beta;
  float eps = 0;
  // A spec that quantizes y (op_spec.h, Quantization): the scale its codes are
  // judged against: the static scale (one value), or for a dynamic scale the
  // kernel's own (rows x scales_per_row), since a consumer dequantizes the
  // codes with the scale the kernel wrote. The references ignore it.
  std::span<const float> scale;
};

// Which result of the spec: the op in exact arithmetic (no rounding point
// applied; what a kernel's users are owed), or its rounding policy's.
enum class SpecResult { exact_math, policy };

// A value decided twice: the correct rounding to double (what errors are
// measured against) and to the format of its tensor in the spec.
struct SpecValues {
  std::vector<double> exact;    // correctly rounded to double (ties to even)
  std::vector<double> rounded;  // correctly rounded to the tensor's dtype, as a double
};

struct SpecForwardReference {
  SpecValues y;             // rows x cols (not for a spec with `linear`)
  SpecValues residual_out;  // rows x cols: x + residual (with `add`; empty otherwise)
  SpecValues mean;          // rows (LayerNorm)
  SpecValues stat;          // rows: rstd or rrms (under the policy, rounded at `r` if the spec rounds there)
  std::vector<double> xhat; // rows x cols: the normalized value (rounded at `xhat` under a policy that rounds there), to double
  std::vector<char> finite; // rows: every input of the norm is finite (x, residual; under the policy the stored sum)
  // rows: the condition of the norm's input s (after the rounding at `sum`
  // under the policy): d, kappa = mean|s| r, max_kappa = max|s| r,
  // eps_share = eps r^2 and r, each within relative 2^-50 (double arithmetic
  // on exact values); rows = 1.
  std::vector<RowCondition> condition;
  std::vector<double> mean_abs_s;  // rows: mean |s_i|, within relative 2^-50
  // rows: the exact mean and variance of s (finite, mean and variance of
  // RowStats, each correctly rounded to double; RMSNorm: mean(s^2) in
  // variance, as RowStats has it) where the fast phase took
  // the row (s_stats_known; spec_reference_fast.h): row_scale.h's row
  // scale of s, which spares a second pass over the row to compute it.
  std::vector<RowStats> s_stats;
  std::vector<char> s_stats_known;
  unsigned bits_used = 0;   // the highest working precision a row needed
};

// The longest row spec_reference_fwd takes: it forms k^2 d (k = d for
// LayerNorm) exactly in a double, which holds every integer below 2^53.
inline constexpr int64_t kSpecReferenceMaxCols = (int64_t{1} << 17) - 1;

// Throws std::invalid_argument when the spec is not a forward spec without
// `linear` (spec_error() included), a row is longer than
// kSpecReferenceMaxCols or the inputs' sizes do not fit it. A row
// with a non-finite x or residual, or under a policy that rounds at `sum` a
// stored sum past its format's range (+-inf: the norm's input is then
// infinite), is all NaN (the row-NaN convention, docs/semantics.md) and
// finite[row] = 0; a non-finite gamma or beta makes
// its own column's y the IEEE value of the exact w xhat + beta (+-inf or NaN).
// `phases`: the fast phase first (the float references of reference.h decide
// most rows), or the interpreter alone; both give the same values, which
// tests/verify/test_spec_reference.cpp checks.
enum class SpecPhases { fast_then_exact, exact_only };
SpecForwardReference spec_reference_fwd(const OpSpec& spec, const SpecInputs& inputs, SpecResult which,
                                        SpecPhases phases = SpecPhases::fast_then_exact);

}  // namespace normcheck
