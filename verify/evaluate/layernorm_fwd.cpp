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
  ev.row_digests = row_digests_of(p.rows, {{&y, static_cast<std::size_t>(p.cols)}, {&mean_out, 1}, {&rstd_out, 1}});
  if (run.options.outputs_only) return;
  if (&given_or_own == &own) compute_main_reference(own, x.widened, {}, p);
  const LayerNormFwdReference& ref = given_or_own.layernorm_fwd;
  MainElement* const kept = keep_main_elements(run, ev, y.values, given_or_own);

  tally_rows(ev, run.options.nonfinite, p.rows, [&](Tally& tally, int64_t row) {
    const RowStats& s = ref.stats[static_cast<std::size_t>(row)];
    const Bound b = run.bound(row_condition(s));
    const auto r = static_cast<std::size_t>(row);
    if (!s.finite) {
      // A non-finite x (docs/semantics.md): the mean is the extended-real
      // mean, whose NaN or infinity depends on the summation. rstd is not
      // checked: the variance has no extended-real value, and the standard
      // forms give it as NaN, +inf or 0 (so rstd NaN, +0 or eps^-1/2).
      tally.nonfinite_element("mean", row, -1, mean_out.values[r], ref.mean.exact[r]);
    } else {
      tally.element("mean", row, -1, mean_out.values[r], ref.mean.exact[r], mean_allowance(b, s), DType::f32,
                    std::nullopt);
    }
    if (!row_checked(Op::layernorm_fwd, s)) return;
    if (s.finite)
      tally.element("rstd", row, -1, rstd_out.values[r], ref.rstd.exact[r], stat_allowance(b, s), DType::f32,
                    std::nullopt);
    tally_y_row(tally, p, Op::layernorm_fwd, x.widened, p.beta, row, s, b, ref.xhat.exact, ref.y.exact, y,
                k.dtype, kept);
  });
  finish(ev, Op::layernorm_fwd, y.values, ref.y.exact, ref.stats, p.cols);
}

}  // namespace normcheck::evaluation
