// What a backward spec's own words cost beyond its op's bound (op_spec.h):
// the formats of gamma, the saved statistics, dgamma and dbeta; the weight
// 1 + gamma; the backward's rounding points (xhat, dyw, dw_row); the
// accumulator's format (acc=); and the reduction of dgamma and dbeta over the
// rows in blocks (reduce=block:R:P). evaluate() holds a backward kernel of
// any such spec to its bound widened by these, each derived in the comment
// above its code (docs/accuracy_backward.md, "Backward specs").
#pragma once

#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/op_spec.h"

namespace normcheck::evaluation {

// The weights of a backward problem: gamma as the kernel reads it (rounded to
// gamma's format) and w, the weight the exact gradient is taken with (gamma,
// or 1 + gamma under weight=1+gamma; empty without gamma).
struct BackwardWeights {
  std::vector<float> gamma;  // in gamma's format, widened
  std::vector<float> w;
  // Why the problem cannot be judged (empty when it can): under 1 + gamma, a
  // column whose 1 + gamma_j is not a float32 value, which the exact
  // reference (float32 weights) cannot take.
  std::string declined;
};
BackwardWeights backward_weights(const OpSpec& spec, const std::vector<float>& gamma);

// The bound of a row's dx under `spec`: `kernel`, the kernel's bound at the
// row's condition `c`, widened by what the spec's statistics formats,
// rounding points and accumulator cost. `kernel` itself for the op's own spec.
Bound backward_row_bound(const OpSpec& spec, const Bound& kernel, const RowCondition& c);

// The bound of dgamma and dbeta under `spec` at the column condition `c`
// (rows = N, kappa and r the largest over the rows): the kernel's bound over
// N rows, or with reduce=block:R:P over R rows and then the blocks' storage
// and final sum, widened as backward_row_bound() says.
Bound backward_column_bound(const OpSpec& spec, BoundFn kernel, const RowCondition& c);

// Whether a row's saved statistics, rounded to their formats, are within the
// relative error the bounds take: r (rstd or rrms) in the normal range of its
// format and at most its largest finite value, the mean at most its format's
// largest finite value. A row that fails promises nothing for dx and dgamma,
// as row_checked() says for a float32 statistic.
bool saved_formats_hold(const OpSpec& spec, const RowStats& s);

// The allowance of dx (or of the gradient written for the residual) of a
// backward with `add`: the norm's dx, within `allowed` of its exact value,
// plus the given dresidual in float32, rounded to format `t`:
// allowed + v (|exact| + allowed) + t_t, exact the sum's exact value,
// v = u + u_t + u u_t (float32: u, no t_t; a float32 sum does not underflow).
double added_residual_allowance(DType t, double allowed, double exact);

// The allowance of a dgamma or dbeta element written in format `t`, from
// `allowed`, the allowance of the float32 value before that rounding, and
// the exact value: allowed + u_t (|exact| + allowed) + half t's smallest
// subnormal. `allowed` itself for float32.
double rounded_output_allowance(DType t, double allowed, double exact);

}  // namespace normcheck::evaluation
