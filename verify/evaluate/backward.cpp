// The checks LayerNorm and RMSNorm backward share: dx row by row, dgamma and
// dbeta column by column (over every row).
#include <cmath>
#include <limits>

#include "allowance.h"
#include "backward_spec.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_reference.h"
#include "op.h"
#include "row_rules.h"
#include "scale.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// An upper bound on |y^_i - y_i|: y^ is a float, the double `exact` within
// 2^-53 |y_i| of the real y_i, and the rounding of their difference within
// 2^-53 of it, so 2^-52 |y_i| more covers both.
double y_error(const SavedY& y, std::size_t i) {
  return std::fabs(static_cast<double>(y.stored.widened[i]) - y.exact[i]) + 0x1p-52 * std::fabs(y.exact[i]);
}

// What reading y^ in place of y adds to dx's allowance on one row, each
// element's addition from the row's M = mean_j |dy_j| |y^_j - y_j|.
// xhat'_j = (y^_j - beta_j) / w_j = xhat_j + delta_j, delta_j = (y^_j - y_j) / w_j,
// and g_j = w_j dy_j, so g_j delta_j = dy_j (y^_j - y_j). The gradient of the
// op at xhat' against that at xhat (LayerNorm; RMSNorm has no mean(g) term,
// which delta does not touch):
//   r (g_i - mean g - xhat'_i mean(g xhat')) - r (g_i - mean g - xhat_i mean(g xhat))
//     = -r (delta_i mean(g xhat') + xhat_i mean(g delta)),
// |mean(g xhat')| <= mean|g xhat| + M and |mean(g delta)| <= M:
//   |dx'_i - dx_i| <= r (|y^_i - y_i| / |w_i| (mean|g xhat| + M) + |xhat_i| M).
// That is dx' computed exactly from y^. The kernel computes it as it would
// from any input: its bound holds at xhat', where the quantities it scales
// with exceed those at xhat by the terms above, so its own error grows by at
// most the coefficients of the terms delta grows (dx_proj_abs, dx_proj_rel:
// mean|g xhat| and |xhat_i| mean|g xhat|) times the addition; the rounding of
// dx to its format, relative to |dx'| <= |dx| + addition, by u of that
// format times it. So the addition is multiplied by
//   (1 + u_dx) (1 + dx_proj_abs + dx_proj_rel) (1 + 2^-20),
// the last factor for the double arithmetic here (sums of d <= 2^31
// nonnegative terms: relative d 2^-53 <= 2^-22) and the part of the kernel's
// float32 rounding of xhat' (a subtraction and a division, relative 2u =
// 2^-23) that falls on delta rather than on xhat.
// A zero weight leaves xhat_i unknown to the kernel: no promise (+inf).
struct FromYRow {
  double r = 0, mean_abs_g_xhat = 0, m = 0, factor = 1;
  double dx_addition(const SavedY& y, std::size_t i, std::size_t col, double xhat) const {
    const double w = std::fabs(y.weight[col]);
    if (w == 0) return kInf;
    const double a = r * (y_error(y, i) / w * (mean_abs_g_xhat + m) + std::fabs(xhat) * m) * factor;
    return std::isfinite(a) ? a : kInf;
  }
};

FromYRow from_y_row(const SavedY& y, const std::vector<float>& dy, int64_t row, int64_t cols, double r,
                    double mean_abs_g_xhat, const Bound& b, DType dx_format) {
  double sum = 0;
  for (int64_t j = 0; j < cols; ++j) {
    const auto i = static_cast<std::size_t>(row * cols + j);
    sum += std::fabs(static_cast<double>(dy[i])) * y_error(y, i);
  }
  return {r, mean_abs_g_xhat, sum / static_cast<double>(cols),
          (1 + unit_roundoff(dx_format)) * (1 + b.dx_proj_abs + b.dx_proj_rel) * (1 + 0x1p-20)};
}

// What reading y^ adds to dgamma_j = sum_rows dy xhat: sum_rows |dy| |delta|
// = sum_rows |dy| |y^ - y| / |w_j|, times (1 + u) (1 + dgamma_rel) (1 + 2^-20)
// as above: the kernel's sum errs by dgamma_rel of sum|dy xhat'|, rounded to
// float32.
double dgamma_addition(const SavedY& y, const std::vector<float>& dy, int64_t rows, int64_t cols,
                       std::size_t col, const Bound& b) {
  const double w = std::fabs(y.weight[col]);
  if (w == 0) return kInf;
  double sum = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const auto i = static_cast<std::size_t>(row * cols) + col;
    sum += std::fabs(static_cast<double>(dy[i])) * y_error(y, i);
  }
  const double a = sum / w * (1 + unit_roundoff(DType::f32)) * (1 + b.dgamma_rel) * (1 + 0x1p-20);
  return std::isfinite(a) ? a : kInf;
}

}  // namespace

std::optional<SavedY> saved_y(const Kernel& k, const Problem& p, const std::vector<float>& x) {
  const OpSpec spec = spec_of(k);
  if (spec.direction != Direction::bwd || !spec.from_y) return std::nullopt;
  // p.gamma is the weight w itself (evaluate_bwd: gamma, or 1 + gamma), a float32 value
  OpSpec forward = spec;
  forward.direction = Direction::fwd;
  forward.from_y = false;
  if (forward.weight == Weight::one_plus_gamma) forward.weight = Weight::gamma;
  forward.dtype[static_cast<std::size_t>(TensorName::gamma)] = DType::f32;
  const SpecInputs inputs{
      .rows = p.rows, .cols = p.cols, .x = x, .residual = {}, .gamma = p.gamma, .beta = p.beta, .eps = p.eps, .scale = {}};
  const SpecForwardReference f = spec_reference_fwd(forward, inputs, SpecResult::exact_math);
  SavedY y;
  y.dtype = spec.dtype_of(TensorName::y);
  y.stored = store(y.dtype, std::vector<float>(f.y.rounded.begin(), f.y.rounded.end()));
  y.exact = f.y.exact;
  // w (1 without gamma)
  y.weight.assign(static_cast<std::size_t>(p.cols), 1.0);
  for (std::size_t j = 0; j < p.gamma.size(); ++j) y.weight[j] = p.gamma[j];
  return y;
}

BackwardExtraInputs::BackwardExtraInputs(const OpRun& run, const std::vector<float>& x)
    : y_(saved_y(run.kernel, run.problem, x)), beta_(run.problem.beta, run.layout) {
  if (y_) y_array_.emplace(*y_, run.layout);
}
void BackwardExtraInputs::pass_to(KernelArgs& args) const {
  args.saved_y = y_array_ ? y_array_->data() : nullptr;
  args.beta = beta_.present ? beta_.array.data() : nullptr;
}
bool BackwardExtraInputs::guards_intact() const {
  return beta_.array.guards_intact() && (!y_array_ || y_array_->guards_intact());
}
bool BackwardExtraInputs::inputs_kept(const Problem& p) const {
  return beta_.array.holds(p.beta) && (!y_array_ || y_array_->holds(*y_));
}

SavedYArray::SavedYArray(const SavedY& y, ArrayLayout layout) {
  if (y.dtype == DType::f32) f32_.emplace(y.stored.widened, layout);
  else half_.emplace(y.stored.bits, layout);
}
const void* SavedYArray::data() const { return f32_ ? static_cast<const void*>(f32_->data()) : half_->data(); }
bool SavedYArray::guards_intact() const { return f32_ ? f32_->guards_intact() : half_->guards_intact(); }
bool SavedYArray::holds(const SavedY& y) const {
  return f32_ ? f32_->holds(y.stored.widened) : half_->holds(y.stored.bits);
}

std::string start_backward(const OpRun& run, BackwardStart& start) {
  start.x = store(run.kernel.dtype, run.problem.x);
  start.dy = store(run.kernel.dtype, run.problem.dy);
  start.reference = &reference_before_the_call(run, start.x.widened, start.dy.widened, start.own);
  Request request = request_for(run.kernel, run.problem);
  // The saved statistic: the forward's rstd or rrms correctly rounded.
  request.saved_statistic = run.kernel.op == Op::layernorm_bwd ? start.reference->layernorm_fwd.rstd.rounded
                                                              : start.reference->rmsnorm_fwd.rrms.rounded;
  return declines(run.kernel, request);
}

void tally_backward(Tally& tally, const OpSpec& spec, Op op, const BackwardExact& ref, const Problem& p,
                    const std::vector<float>& dy, BoundFn bound, DType dtype, const BackwardOutputs& out,
                    MainElement* kept, const SavedY* from_y) {
  const Readback& dx = out.dx;
  tally.rows(p.rows, p.cols, [&](Tally& tally, int64_t row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(op, s)) return;
    const bool inputs_finite = row_inputs_finite(s, dy, row, p.cols);
    const RowCondition rc = row_condition(s);
    const Bound b = backward_row_bound(spec, bound(rc), rc);
    // statistics in a format that cannot hold them within the bound's error: no promise
    const bool saved_hold = saved_formats_hold(spec, s);
    const double scale = dx_scale(s, ref.mean_abs_g[r], ref.mean_abs_g_xhat[r]);
    const FromYRow y_row =
        from_y && inputs_finite ? from_y_row(*from_y, dy, row, p.cols, s.r, ref.mean_abs_g_xhat[r], b, dtype)
                                : FromYRow{};
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      if (!inputs_finite) {
        // A non-finite x or dy: dx is non-finite in every standard form
        // (docs/semantics.md), so the IEEE evaluation is non-finite throughout.
        tally.nonfinite_row_element("dx", row, col, dx.values[i], std::nullopt);
        if (out.dresidual) tally.nonfinite_row_element("dresidual", row, col, out.dresidual->values[i], std::nullopt);
        if (kept) kept[i].allowed = 0;
        continue;
      }
      const double g = at_or(p.gamma, static_cast<std::size_t>(col), 1) * dy[i];
      const double allowed =
          !saved_hold ? kInf
                      : dx_allowance(b, s.r, g, ref.xhat[i], ref.mean_abs_g[r], ref.mean_abs_g_xhat[r]) +
                            (from_y ? y_row.dx_addition(*from_y, i, static_cast<std::size_t>(col), ref.xhat[i]) : 0);
      if (!out.dresidual) {
        tally.element("dx", row, col, dx.values[i], ref.dx[i], allowed, dtype, scale);
        if (kept) kept[i].allowed = allowed;
        continue;
      }
      // with `add`: ref.dx holds the norm's gradient plus the dresidual given
      const double dx_allowed = added_residual_allowance(dtype, allowed, ref.dx[i]);
      tally.element("dx", row, col, dx.values[i], ref.dx[i], dx_allowed, dtype, scale);
      const DType written = spec.dtype_of(TensorName::residual_out);
      tally.element("dresidual", row, col, out.dresidual->values[i], ref.dx[i],
                    added_residual_allowance(written, allowed, ref.dx[i]), written, scale);
      if (kept) kept[i].allowed = dx_allowed;
    }
  });

  const RowCondition cc = column_condition(op, ref.stats, p.rows);
  const Bound bc = backward_column_bound(spec, bound, cc);
  bool saved_hold = true;  // on every row with finite inputs: dgamma's xhat enters every column
  for (std::size_t row = 0; row < ref.stats.size(); ++row)
    if (row_inputs_finite(ref.stats[row], dy, static_cast<int64_t>(row), p.cols))
      saved_hold = saved_hold && saved_formats_hold(spec, ref.stats[row]);
  const bool dgamma_checked = dgamma_promised(ref.stats) && saved_hold;
  const DType dgamma_format = spec.has(TensorName::dgamma) ? spec.dtype_of(TensorName::dgamma) : DType::f32;
  const DType dbeta_format = spec.has(TensorName::dbeta) ? spec.dtype_of(TensorName::dbeta) : DType::f32;
  // dgamma and dbeta are the extended reals' column sums under both
  // conventions, held as exact values (docs/semantics.md). Where an infinite
  // dy_j meets an xhat_j whose sign the bound does not fix, the exact
  // dgamma_j is NaN or an infinity the kernel's rounding of xhat_j decides:
  // any non-finite value is admitted there, a finite one is not.
  const std::vector<bool> unsigned_inf = columns_with_unsigned_infinity(bc, ref.stats, ref.xhat, dy, p.cols);
  // A backward from=y: no promise on a column whose weight is 0 (the kernel
  // cannot recover xhat_j there); on one with an infinite dy, the sign of
  // xhat'_j the kernel recovers is not bounded, so any non-finite dgamma_j
  // is admitted, as above.
  for (std::size_t col = 0; col < static_cast<std::size_t>(p.cols); ++col) {
    const auto c = static_cast<int64_t>(col);
    if (out.dgamma) {
      const Readback& dgamma = *out.dgamma;
      const double from_y_addition = from_y ? dgamma_addition(*from_y, dy, p.rows, p.cols, col, bc) : 0;
      const bool unknown_weight = from_y && from_y->weight[col] == 0;
      if (dgamma_checked && !unknown_weight && (unsigned_inf[col] || from_y_addition == kInf)) {
        tally.nonfinite_element("dgamma", -1, c, dgamma.values[col], ref.dgamma[col]);
      } else {
        const double allowed =
            dgamma_checked && !unknown_weight
                ? rounded_output_allowance(
                      dgamma_format, dgamma_allowance(bc, ref.sum_abs_dy_xhat[col], ref.sum_abs_dy[col]) + from_y_addition,
                      ref.dgamma[col])
                : kInf;
        tally.element("dgamma", -1, c, dgamma.values[col], ref.dgamma[col], allowed, dgamma_format,
                      dgamma_scale(cc.kappa, ref.sum_abs_dy_xhat[col], ref.sum_abs_dy[col]));
      }
    }
    if (out.dbeta && ref.dbeta)
      tally.element("dbeta", -1, c, out.dbeta->values[col], (*ref.dbeta)[col],
                    rounded_output_allowance(dbeta_format, dbeta_allowance(bc, ref.sum_abs_dy[col]), (*ref.dbeta)[col]),
                    dbeta_format, ref.sum_abs_dy[col]);
  }
}

}  // namespace normcheck::evaluation
