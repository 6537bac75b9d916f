// evaluate(): runs one kernel of the table on one problem, in guarded buffers,
// and holds every output to the kernel's bound against the exact reference.
//
// What it checks, in this order of severity:
//   - memory: each array sits in a 64-byte-aligned buffer at the problem's
//     misalignment, between two guard zones filled with a canary; outputs are
//     prefilled with a signalling-NaN sentinel that no arithmetic produces
//     (a signalling NaN only arises by copying one). A changed guard is an
//     out-of-bounds write, a surviving sentinel an unwritten output, a changed
//     input byte a write to an input;
//   - which rows: row_checked() (evaluate.h) says which rows' outputs are
//     checked at all: not an ill-posed row (sigma^2 + eps = 0), nor a backward
//     row whose saved statistic fl(r) is not within u of r. dgamma promises
//     nothing when such a backward row is in the problem (its xhat enters every
//     column). A row with a non-finite input is held, whatever the bound, to
//     EvaluateOptions::nonfinite (by default the row-NaN convention or the
//     IEEE evaluation of the formula, element by element: evaluate/nonfinite.h,
//     docs/semantics.md "Rows with a non-finite input"); its mean must be
//     non-finite, a LayerNorm rstd is not checked. An infinite dy_j on an
//     xhat_j within the bound's own error of 0 (e.g. x_j = fl(mu) != mu) leaves
//     the kind of the exact dgamma_j (NaN, +inf or -inf) to the kernel's
//     rounding: that column must be non-finite, of any kind;
//   - promises: a +inf coefficient of the Bound promises nothing for that
//     output (kernel.h); the allowance is +inf and nothing of the element is
//     checked, its NaN/inf placement included;
//   - non-finite values otherwise (docs/semantics.md): where the reference is
//     NaN the kernel must give NaN, where it is +-inf the same infinity, where
//     it is finite a finite value, or an infinity on a side where exact +-
//     allowance reaches beyond the largest finite value of the output's
//     format (FLT_MAX; 65504 for f16): bounds are derived without overflow;
//   - accuracy: |computed - exact| / allowance per element (0/0 = 0), the
//     allowance being the Bound's formula (kernel.h) at the row's exact
//     condition.
// The exact values are doubles (the reference's rounding to 53 bits), so a
// ratio carries a relative uncertainty of ~2^-53 |exact| / allowance, far below
// anything a worst-case bound is ever attained to.
//
// This file is the front: it validates the problem, declines what the kernel
// does not take and hands the rest to its op (evaluate/<op>.cpp). The pieces:
// evaluate/guarded_array.h (memory), stored_input.h (16-bit storage),
// kernel_call.h (the call), row_rules.h (which rows and columns are checked),
// allowance.h (the Bound's formulas), nonfinite.h (rows with a non-finite
// input), scale.h (the row's scale of the ULP figure), tally.h (the element
// checks), op.h.
#include "normcheck/evaluate.h"
#include "normcheck/row_scale.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "evaluate/op.h"
#include "normcheck/bounds.h"
#include "normcheck/huge_pages.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_reference.h"

namespace normcheck {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("evaluate: ") + what);
}

}  // namespace

namespace evaluation {

void validate(const Kernel& kernel, const Problem& p) {
  const auto n = static_cast<std::size_t>(p.rows * p.cols);
  require(p.rows >= 1 && p.cols >= 1, "a problem has rows >= 1 and cols >= 1");
  require(p.misalign_floats >= 0 && p.misalign_floats < 16, "misalign_floats is in [0, 16)");
  require(p.x.size() == n, "x must hold rows * cols values");
  require(p.gamma.empty() || p.gamma.size() == static_cast<std::size_t>(p.cols),
          "gamma must be empty or hold cols values");
  require(p.beta.empty() || p.beta.size() == static_cast<std::size_t>(p.cols),
          "beta must be empty or hold cols values");
  const bool backward = kernel.op == Op::layernorm_bwd || kernel.op == Op::rmsnorm_bwd;
  require(!backward || p.dy.size() == n, "dy must hold rows * cols values for a backward op");
  require(p.eps >= 0, "eps must be >= 0");
  require(p.residual.empty() || p.residual.size() == n, "residual must be empty or hold rows * cols values");
  require(p.row_stride == 0 || p.row_stride >= p.cols, "row_stride must be 0 or at least cols");
  if (is_norm_linear(kernel.op)) {
    // W, b and out_features: their sizes (a problem without W is declined, not refused)
    require(p.out_features >= 0, "out_features must be >= 0");
    require(p.weight.size() == static_cast<std::size_t>(p.out_features * p.cols),
            "weight must hold out_features * cols values");
    require(p.bias.empty() || p.bias.size() == static_cast<std::size_t>(p.out_features),
            "bias must be empty or hold out_features values");
    require(kernel.op == Op::layernorm_linear_fwd || p.beta.empty(), "RMSNorm has no beta");
  }
}

}  // namespace evaluation

Problem with_rows(const Problem& p, std::span<const int64_t> order) {
  Problem q = p;
  q.rows = static_cast<int64_t>(order.size());
  const auto cols = static_cast<std::size_t>(p.cols);
  const auto select = [&](const std::vector<float>& from, std::vector<float>& to) {
    to.clear();
    if (from.empty()) return;
    for (const int64_t r : order) {
      const auto begin = from.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * cols);
      to.insert(to.end(), begin, begin + static_cast<std::ptrdiff_t>(cols));
    }
  };
  select(p.x, q.x);
  select(p.dy, q.dy);
  select(p.residual, q.residual);
  return q;
}

Request request_for(const Kernel& kernel, const Problem& p) {
  const bool backward = kernel.op == Op::layernorm_bwd || kernel.op == Op::rmsnorm_bwd;
  return {.shape = {p.rows, p.cols, !p.gamma.empty(), !p.beta.empty(), p.out_features},
          .eps = p.eps,
          .x = p.x,
          .dy = backward ? std::span<const float>(p.dy) : std::span<const float>(),
          .row_scales = kernel.range.has_row_terms() ? row_scales(kernel, p) : std::vector<RowScale>{}};
}

std::string norm_linear_problem_declined(const Kernel& kernel, const Problem& p) {
  (void)kernel;
  if (p.out_features == 0)
    return "the problem has no Linear (out_features = 0): a norm followed by a Linear needs W";
  const auto finite = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
  };
  if (!finite(p.gamma) || !finite(p.beta) || !finite(p.weight) || !finite(p.bias))
    return "a non-finite gamma, beta, W or b: a norm followed by a Linear is checked on finite "
           "parameters only (reference_linear.h)";
  return {};
}

void JudgedTally::add(const Evaluation& ev) {
  if (ev.declined.empty()) {
    ++judged;
    return;
  }
  if (declined++ == 0) first_decline = ev.declined;
}

void JudgedTally::add(const JudgedTally& other) {
  judged += other.judged;
  if (declined == 0) first_decline = other.first_decline;
  declined += other.declined;
}

std::string JudgedTally::declined_text(std::string_view unit) const {
  if (declined == 0) return {};
  return "declined " + std::to_string(declined) + " of " + std::to_string(declined + judged) + " " +
         std::string(unit) + ": " + first_decline;
}

std::string spec_not_judged(const OpSpec& spec) {
  if (spec.direction == Direction::fwd && spec.acc)
    return "evaluate() judges no forward spec with 'acc=' (" + to_text(spec) +
           ") yet: the forward's rounding policy sums in float32";
  if (spec.direction != Direction::bwd) return {};
  // The backward is held to its op's bound plus what the words below cost
  // (evaluate/backward_spec.h): the formats of gamma, the saved statistics,
  // y (from=y), dgamma and dbeta, the weight, the rounding points, acc=,
  // reduce=, add, stats=none, from=y, and beta's absence. Every other word leaves the table's op of the spec's activation
  // format: that is what is compared.
  const DType activations = spec.dtype_of(TensorName::x);
  if (spec.dtype_of(TensorName::dy) != activations || spec.dtype_of(TensorName::dx) != activations)
    return "evaluate() judges no backward spec whose dy or dx is not in x's format (" + to_text(spec) + ") yet";
  if (spec.norm == NormKind::rmsnorm && spec.bias)
    return "evaluate() judges no RMSNorm backward with 'bias' (" + to_text(spec) + ") yet: its dbeta has no reference";
  if (spec.from_y && spec.bias && spec.dtype_of(TensorName::beta) != DType::f32)
    return "evaluate() judges no backward from=y whose beta is not float32 (" + to_text(spec) + ") yet";
  OpSpec judged = spec;
  for (TensorName t : {TensorName::gamma, TensorName::mean, TensorName::stat, TensorName::dgamma, TensorName::dbeta})
    judged.dtype[static_cast<std::size_t>(t)] = DType::f32;
  judged.dtype[static_cast<std::size_t>(TensorName::y)] = activations;
  judged.weight = Weight::gamma;
  judged.add = false;
  judged.dtype[static_cast<std::size_t>(TensorName::residual)] = activations;
  judged.dtype[static_cast<std::size_t>(TensorName::residual_out)] = activations;
  judged.round = {};
  judged.acc.reset();
  judged.reduce.reset();
  judged.stats = true;
  judged.from_y = false;
  judged.bias = spec.norm == NormKind::layernorm;
  if (judged == spec_of(op_of(spec), activations)) return {};
  return "evaluate() judges no backward spec " + to_text(spec) +
         " yet: only its op's with other formats of gamma, the statistics, dgamma and dbeta, weight=1+gamma or "
         "none, bias=none, rounding points, acc=, reduce=, add, stats=none or from=y (docs/ops.md)";
}

Evaluation evaluate(const Kernel& kernel, const Problem& problem,
                    std::optional<BoundFn> bound_override) {
  EvaluateOptions options;
  options.bound_override = bound_override;
  return evaluate(kernel, problem, options);
}

Evaluation evaluate(const Kernel& kernel, const Problem& problem, const EvaluateOptions& options) {
  retain_freed_memory();  // the next judgement reuses this one's pages (huge_pages.h)
  const std::optional<BoundFn>& bound_override = options.bound_override;
  Evaluation ev;
  ev.kernel = std::string(kernel.name);
  ev.op = kernel.op;
  const Problem& p = problem;
  evaluation::validate(kernel, p);
  // A kernel promises nothing for what it declines (a shape, inputs outside
  // the range it declares), so holding it to its bound there would report a
  // pass that means nothing.
  ev.declined = declines(kernel, request_for(kernel, p));
  if (ev.declined.empty() && is_norm_linear(kernel.op)) ev.declined = norm_linear_problem_declined(kernel, p);
  const OpSpec spec = spec_of(kernel);
  if (ev.declined.empty() && p.row_stride != 0 && p.row_stride != p.cols && !kernel.takes_row_stride)
    ev.declined = "rows " + std::to_string(p.row_stride) + " elements apart: the kernel takes contiguous rows only";
  if (ev.declined.empty()) ev.declined = spec_not_judged(spec);
  if (ev.declined.empty() && spec.direction == Direction::bwd) {
    if (spec.from_y && p.cols > kSpecReferenceMaxCols)
      ev.declined = "d = " + std::to_string(p.cols) + ": the y a backward from=y reads comes from the exact forward, "
                    "which takes rows of at most " + std::to_string(kSpecReferenceMaxCols) + " elements";
  }
  if (ev.declined.empty() && spec.add && p.residual.empty())
    ev.declined = "its spec adds a residual (" + to_text(spec) + "): the problem has none";
  if (ev.declined.empty() && spec.quant && !spec.quant->dynamic() && !(p.scale > 0 && std::isfinite(p.scale)))
    ev.declined = "its spec quantizes y by a static scale (" + to_text(spec) + "): the problem has none (nc.scale)";
  if (!ev.declined.empty()) return ev;

  BoundFn bound = bound_override.value_or(kernel.bound);
  if (!bound) bound = default_bound(kernel.op);
  const evaluation::OpRun run{kernel, p, bound, options, {p.misalign_floats, options.guard_pages}};
  switch (kernel.op) {
    case Op::layernorm_fwd:
    case Op::rmsnorm_fwd: evaluation::evaluate_spec_fwd(run, ev); break;  // any forward spec
    case Op::layernorm_bwd:
    case Op::rmsnorm_bwd: evaluation::evaluate_bwd(run, ev); break;
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd: evaluation::evaluate_norm_linear(run, ev); break;
  }
  return ev;
}

}  // namespace normcheck
