// LayerNorm backward: dx, dgamma, dbeta against the bound, from the forward's
// mean and rstd correctly rounded.
#include "kernel_call.h"
#include "op.h"

namespace normcheck::evaluation {

void evaluate_layernorm_bwd(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  const auto cols = static_cast<std::size_t>(p.cols);
  BackwardStart start;
  ev.declined = start_backward(run, start);
  if (!ev.declined.empty()) return;
  const StoredInput &x = start.x, &dy = start.dy;
  const ExactReference& given_or_own = *start.reference;
  const LayerNormFwdReference& saved = given_or_own.layernorm_fwd;  // the saved statistics

  OptionalInput gamma(p.gamma, run.layout);
  FloatArray mean(saved.mean.rounded, run.layout), rstd(saved.rstd.rounded, run.layout);
  FloatArray dgamma(cols, run.layout, sentinel32()), dbeta(cols, run.layout, sentinel32());
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};  // eps: a version-2 backward gets it
  const BackwardExtraInputs extra(run, x.widened);  // a backward from=y: y and beta in place of x
  extra.pass_to(args);
  args.gamma = gamma.pointer();
  args.saved_mean = mean.data();
  args.saved_stat = rstd.data();
  args.dgamma = dgamma.data();
  args.dbeta = dbeta.data();
  const MainRun call = call_kernel(k, args, x, &dy, run.layout, run.options);
  const Readback& dx = call.out;
  const Readback dgamma_out = read(dgamma), dbeta_out = read(dbeta);
  ev.out_of_bounds_write = !call.memory_ok || !gamma.array.guards_intact() || !extra.guards_intact() ||
                           !mean.guards_intact() || !rstd.guards_intact() || !dgamma.guards_intact() ||
                           !dbeta.guards_intact();
  ev.wrote_input = !call.inputs_kept || !gamma.array.holds(p.gamma) || !extra.inputs_kept(p) ||
                   !mean.holds(saved.mean.rounded) || !rstd.holds(saved.rstd.rounded);
  ev.unwritten_output = dx.unwritten || dgamma_out.unwritten || dbeta_out.unwritten;
  ev.output_digest = digest_of({&dx, &dgamma_out, &dbeta_out});
  ev.row_digests = row_digests_of(p.rows, {{&dx, static_cast<std::size_t>(p.cols)}});  // dgamma, dbeta: sums over rows
  if (run.options.outputs_only) return;
  if (&given_or_own == &start.own) compute_main_reference(start.own, x.widened, dy.widened, p);
  const LayerNormBwdReference& ref = given_or_own.layernorm_bwd;

  Tally tally(ev, run.options.nonfinite);
  tally_backward(tally, Op::layernorm_bwd,
                 {ref.stats, ref.xhat.exact, ref.dx.exact, ref.dgamma.exact, &ref.dbeta.exact,
                  ref.sum_abs_dy_xhat, ref.sum_abs_dy, ref.mean_abs_g, ref.mean_abs_g_xhat},
                 p, dy.widened, run.bound, k.dtype, dx, dgamma_out, &dbeta_out,
                 keep_main_elements(run, ev, dx.values, given_or_own), extra.from_y());
  finish(ev, Op::layernorm_bwd, dx.values, ref.dx.exact, ref.stats, p.cols);
}

}  // namespace normcheck::evaluation
