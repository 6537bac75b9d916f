// LayerNorm forward: y, mean, rstd against the bound, row by row.
#include "allowance.h"
#include "kernel_call.h"
#include "op.h"
#include "row_rules.h"

namespace normcheck::evaluation {

void evaluate_layernorm_fwd(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  const auto rows = static_cast<std::size_t>(p.rows);
  const StoredInput x = store(k.dtype, p.x);
  ExactReference own;
  const ExactReference& given_or_own = reference_before_the_call(run, x.widened, own);
  OptionalInput gamma(p.gamma, run.layout), beta(p.beta, run.layout);
  FloatArray mean(rows, run.layout, sentinel32());
  FloatArray rstd(rows, run.layout, sentinel32());
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};
  args.gamma = gamma.pointer();
  args.beta = beta.pointer();
  args.mean = mean.data();
  args.stat = rstd.data();
  const MainRun call = call_kernel(k, args, x, nullptr, run.layout, run.options);
  const Readback& y = call.out;
  const Readback mean_out = read(mean), rstd_out = read(rstd);
  ev.out_of_bounds_write = !call.memory_ok || !gamma.array.guards_intact() ||
                           !beta.array.guards_intact() || !mean.guards_intact() ||
                           !rstd.guards_intact();
  ev.wrote_input = !call.inputs_kept || !gamma.array.holds(p.gamma) || !beta.array.holds(p.beta);
  ev.unwritten_output = y.unwritten || mean_out.unwritten || rstd_out.unwritten;
  ev.output_digest = digest_of({&y, &mean_out, &rstd_out});
  if (run.options.outputs_only) return;
  if (&given_or_own == &own) compute_main_reference(own, x.widened, {}, p);
  const LayerNormFwdReference& ref = given_or_own.layernorm_fwd;
  MainElement* const kept = keep_main_elements(run, ev, y.values, given_or_own);

  tally_rows(ev, p.rows, [&](Tally& tally, int64_t row) {
    const RowStats& s = ref.stats[static_cast<std::size_t>(row)];
    const Bound b = run.bound(row_condition(s));
    const auto r = static_cast<std::size_t>(row);
    if (s.finite)
      tally.element("mean", row, -1, mean_out.values[r], ref.mean.exact[r], mean_allowance(b, s),
                    false, DType::f32);
    if (!row_checked(Op::layernorm_fwd, s)) return;
    if (s.finite)
      tally.element("rstd", row, -1, rstd_out.values[r], ref.rstd.exact[r], stat_allowance(b, s),
                    false, DType::f32);
    for (int64_t col = 0; col < p.cols; ++col) {
      const auto i = static_cast<std::size_t>(row * p.cols + col);
      const auto c = static_cast<std::size_t>(col);
      // a row with non-finite x: y must be NaN, whatever the bound
      const double allowed = s.finite ? y_allowance(b, at_or(p.gamma, c, 1), at_or(p.beta, c, 0),
                                                    ref.xhat.exact[i])
                                      : 0;
      tally.element("y", row, col, y.values[i], ref.y.exact[i], allowed, true, k.dtype);
      if (kept) kept[i].allowed = allowed;
    }
  });
  finish(ev, Op::layernorm_fwd, y.values, ref.y.exact, ref.stats, p.cols);
}

}  // namespace normcheck::evaluation
