// A kernel against a spec's rounding policy: the values a kernel that follows
// the policy in float32 arithmetic may write (the admissible range of each
// output element), and which rounding policies a kernel's outputs are
// consistent with.
//
// The admissible range composes the bound by stage (docs/ops.md, "The
// admissible range"): each stage's value is known within an interval (its
// exact value, widened by what a careful float32 computation of that stage
// can be off: the default bound's coefficients, kernels/bounds.cpp), and a
// rounding point rounds the interval's two ends, which is sound because
// rounding to nearest is monotone. The outputs end rounded to their formats,
// so a range is a set of consecutive values of the output's format: often one.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_reference.h"

namespace normcheck {

// Per element, the least and greatest value (of the tensor's format, as a
// double) a kernel following the policy may write. NaN in both on a row with
// a non-finite input (held to the non-finite rule, not to a range); -inf and
// +inf where the bound promises nothing.
struct AdmissibleRange {
  std::vector<double> lo, hi;
  // A statistic stored before its rounding point or after it (`round=r:T`):
  // the values of [lo, hi] are those of [before_lo, before_hi], the range
  // before the rounding, and the values of format `grid` in [lo, hi], the
  // rounded ones. Without a grid (and before_lo empty): every value of [lo, hi].
  std::optional<DType> grid;
  std::vector<double> before_lo, before_hi;
  // The ends element i's value v is held to: [lo, hi], or for a v that is not
  // a value of `grid`, [before_lo, before_hi].
  std::pair<double, double> ends_for(std::size_t i, double v) const;
  // v within ends_for(i, v) (a NaN range admits only NaN; [-inf, inf],
  // nothing promised, admits NaN too)
  bool admits(std::size_t i, double v) const;
  // [lo, hi] holds an infinite end: the range admits every value beyond its
  // other end, by promising nothing there (not a NaN range)
  bool unbounded(std::size_t i) const { return std::isinf(lo[i]) || std::isinf(hi[i]); }
};

// For a spec that quantizes y (op_spec.h, Quantization), y's range is one of
// codes, by their values (quant_value(): an fp8 value or an integer), and an
// overflow to e4m3fn's NaN is the end +-inf on its side. It is the declared
// cast of the declared product or quotient by the scale of SpecInputs::scale,
// over the pre-cast y's range (the norm's, in y's dtype): every step is
// monotone, so the ends give the range. `scale` is the range of a dynamic
// scale (rows x scales_per_row): the declared formula over the range of the
// absolute maximum the row's or block's pre-cast ranges allow. On a row with
// a non-finite input, and wherever the kernel's scale is not a positive
// float or (scale_apply=inverse) its inverse fl32(1 / s) overflows, both are
// [-inf, inf]: codes cast by no scale, or by an infinite inverse, say nothing
// of the cast, and a row with a non-finite input is judged by the rule of
// docs/semantics.md ("Quantized outputs on a non-finite row"), not by a range.
// `amax` (the word amax) is the range of the largest |y^| over the tensor,
// one element: [max m_i, max M_i] over every element's range as for a
// dynamic scale's a; NaN on a problem with a non-finite row (the tensor's
// amax is NaN), [-inf, inf] where an element's range is [-inf, inf] (an
// ill-posed row, whose y may be NaN: nothing promised).
struct SpecAdmissible {
  AdmissibleRange y, residual_out, mean, stat;  // empty where the spec has no such output
  AdmissibleRange scale;                        // a dynamic scale's range; empty otherwise
  AdmissibleRange amax;                         // the tensor's amax (quant->amax); empty otherwise
};

// The admissible ranges of a forward spec (not `linear`) on `inputs` under
// its own rounding policy, each stage off its exact value by what `bound`
// allows (the kernel's bound; null: the default bound of the norm).
// `sum_only_reference`: spec_reference_fwd(spec_sum_only(spec), inputs,
// SpecResult::policy) when the caller has it, else computed here. Throws
// std::invalid_argument as spec_reference_fwd().
SpecAdmissible spec_admissible_fwd(const OpSpec& spec, const SpecInputs& inputs, BoundFn bound = nullptr,
                                   const SpecForwardReference* sum_only_reference = nullptr);

// The spec with only its `sum` rounding point: whose reference (under the
// policy) gives the norm's input, statistics and xhat the admissible range
// starts from.
OpSpec spec_sum_only(const OpSpec& spec);

// A forward kernel's outputs on one problem (values of each tensor's format,
// widened; empty where the kernel has no such output).
struct SpecOutputs {
  std::vector<double> y, residual_out, mean, stat;
  std::vector<double> scale;  // a dynamic scale the kernel wrote (a quantized y: y holds the codes' values)
};

// The code the declared cast of a quantized spec gives for a real t, on the
// line of spec_admissible_fwd's code ranges (an overflow to e4m3fn's NaN is
// +-inf by t's sign).
double quantized_code(const Quantization& q, double t);

// The t a quantized spec casts for a y of y's dtype and the scale s:
// fl32(y fl32(1 / s)), fl32(y / s) or fl32(y s) by scale_apply (op_spec.h),
// each float32 operation evaluated exactly (spec_policy.cpp's header).
double quant_t(const Quantization& q, double y, double s);

// The real t exact math's y stands for: y / s, or y s under
// scale_apply=multiply. Its reciprocal factor dequantizes a code: y ~ q s, or
// q / s (q scale_inv) under multiply.
double exact_quant_t(const Quantization& q, double y, double s);
double dequantized(const Quantization& q, double code, double s);

// Whether codes cast by scale s say anything of the cast: s a positive finite
// float, and under scale_apply=inverse an inverse fl32(1 / s) that does not
// overflow (s >= 2^-128). Otherwise every y casts to +-max or NaN (an
// infinite factor), or to NaN (a NaN one).
bool scale_judged(const Quantization& q, double s);

// The codes a kernel following the spec may write for a non-finite t (a NaN
// y, or an infinite one on a row with a non-finite input), besides the
// format's non-finite codes: with nan=clamp, +max (fp8: fmaxf(-max,
// fminf(NaN, max)) = max) or 0 (int8: cvt.rni.sat converts NaN to 0) for a
// NaN, and the clamp's +-max (int8: 127, qmin) for an infinity; none
// without it (int8 then has no correct code for a NaN y).
std::vector<double> nonfinite_t_codes(const Quantization& q);

// How far outputs are from what a policy admits: the elements outside their
// range, and the first of them. Elements of y, mean and the statistic on a row
// with a non-finite input (a NaN range) are not held to a range: the
// non-finite rule judges them, and they say nothing of where a kernel rounds.
struct PolicyCheck {
  int64_t outside = 0;        // elements of every output outside their admissible range
  int64_t checked = 0;        // elements held to a range
  // With a declared policy's ranges to compare with: elements this policy
  // admits by an unbounded range where the declared range is bounded and
  // does not admit them. The policy admits them by promising nothing there:
  // it explains no departure from the declared policy.
  int64_t vacuous = 0;
  std::string first_output;   // "y", "residual_out", "mean", "rstd" / "rrms"; empty when none is outside
  int64_t first_index = -1;
  double first_value = 0, first_lo = 0, first_hi = 0;
};
PolicyCheck check_policy(const OpSpec& spec, const SpecAdmissible& admissible, const SpecOutputs& outputs,
                         const SpecAdmissible* declared = nullptr);

// The rounding policies a kernel of `spec` is held to when it is identified
// (identify_fwd(), and evaluate() with EvaluateOptions::identify), the
// declared spec among them. A forward spec: the spec with each subset of the
// rounding points its activation format makes distinct (`sum` at the
// activation format or float32 with `add`; r, xhat, weight with 1 + gamma,
// and scaled at the activation format, scaled only where it is not y's own
// rounding: with beta, or y in another format). A backward spec: each
// combination of xhat and dyw rounded to x's format or not, dw_row rounded
// to x's or dgamma's format or not (with a weight), every sum in float32 or
// in x's format (acc=), and with reduce= the partials stored in float32, x's
// or dgamma's format; the rest of the spec (its tensors' formats, the weight,
// add, R) is the interface, not a policy. Every choice is a 16-bit format: a
// rounding to float32 inside float32 arithmetic is no policy of its own, so a
// spec with nothing in 16 bits to round to (a float32 forward; a backward
// with x and dgamma in float32) has no candidate but itself, nor has a norm
// followed by a Linear.
std::vector<OpSpec> candidate_policies(const OpSpec& spec);

// Whether `outer` admits every output `inner` admits, on every problem: two
// backward policies of one spec where `outer` rounds wherever `inner` does,
// to the same format, and keeps its sums (acc=) and partials (reduce=) in
// 16 bits wherever `inner` does. Each backward word only widens the
// allowances (evaluate/backward_spec.cpp: every perturbation adds terms and
// grows coefficients), so the admitted sets nest: a kernel that follows
// `inner` is consistent with `outer` too. A forward policy's range is the
// rounding of its own values, which do not nest: false for forward policies.
bool policy_within(const OpSpec& inner, const OpSpec& outer);

// The spec with its quantization's cast done each other way a kernel may do
// it, one change at a time: int8's other tie rule and other lowest code, the
// other ways to apply the scale (inverse, divide, multiply), fp8 with or without
// saturation. Empty for a spec that does not quantize y.
std::vector<OpSpec> cast_variants(const OpSpec& spec);

// The policies kernels are known to ship, by their rounding points (and for
// a backward, its weight, `add` and two-stage reduction; data: docs/ops.md
// lists the same): the name of the projects' kernels that follow `policy`,
// or empty.
std::string_view known_policy_name(const OpSpec& policy);

struct PolicyMatch {
  OpSpec policy;
  PolicyCheck check;  // summed over the problems
  bool consistent() const { return check.outside == 0; }
  // Consistent, and bounded wherever the declared policy's range does not
  // admit the outputs: the policy accounts for the departure (a
  // policy_mismatch names it); otherwise the finding is `accuracy`.
  bool explains() const { return consistent() && check.vacuous == 0; }
};

// Every candidate policy of `declared` against a kernel's outputs on several
// problems (inputs[i] gave outputs[i]), in the order of candidate_policies(),
// each policy's range built with the kernel's `bound` (null: the default
// bound of the norm), as spec_admissible_fwd() builds it.
std::vector<PolicyMatch> identify_fwd(const OpSpec& declared, std::span<const SpecInputs> inputs,
                                      std::span<const SpecOutputs> outputs, BoundFn bound = nullptr);

}  // namespace normcheck
