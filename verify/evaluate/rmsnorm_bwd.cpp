// RMSNorm backward: dx and dgamma against the bound, from the forward's rrms
// correctly rounded.
#include "kernel_call.h"
#include "op.h"

namespace normcheck::evaluation {

void evaluate_rmsnorm_bwd(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  const auto cols = static_cast<std::size_t>(p.cols);
  BackwardStart start;
  ev.declined = start_backward(run, start);
  if (!ev.declined.empty()) return;
  const StoredInput &x = start.x, &dy = start.dy;
  const ExactReference& given_or_own = *start.reference;
  const RmsNormFwdReference& saved = given_or_own.rmsnorm_fwd;  // the saved statistics

  OptionalInput gamma(p.gamma, run.layout);
  FloatArray rrms(saved.rrms.rounded, run.layout);
  FloatArray dgamma(cols, run.layout, sentinel32());
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};  // eps: a version-2 backward gets it
  const BackwardExtraInputs extra(run, x.widened);  // a backward from=y: y and beta in place of x
  extra.pass_to(args);
  args.gamma = gamma.pointer();
  args.saved_stat = rrms.data();
  args.dgamma = dgamma.data();
  const MainRun call = call_kernel(k, args, x, &dy, run.layout, run.options);
  const Readback& dx = call.out;
  const Readback dgamma_out = read(dgamma);
  ev.out_of_bounds_write = !call.memory_ok || !gamma.array.guards_intact() || !extra.guards_intact() ||
                           !rrms.guards_intact() || !dgamma.guards_intact();
  ev.wrote_input = !call.inputs_kept || !gamma.array.holds(p.gamma) || !extra.inputs_kept(p) ||
                   !rrms.holds(saved.rrms.rounded);
  ev.unwritten_output = dx.unwritten || dgamma_out.unwritten;
  ev.output_digest = digest_of({&dx, &dgamma_out});
  ev.row_digests = row_digests_of(p.rows, {{&dx, static_cast<std::size_t>(p.cols)}});  // dgamma: a sum over rows
  if (run.options.outputs_only) return;
  if (&given_or_own == &start.own) compute_main_reference(start.own, x.widened, dy.widened, p);
  const RmsNormBwdReference& ref = given_or_own.rmsnorm_bwd;

  Tally tally(ev, run.options.nonfinite);
  tally_backward(tally, Op::rmsnorm_bwd,
                 {ref.stats, ref.xhat.exact, ref.dx.exact, ref.dgamma.exact, nullptr,
                  ref.sum_abs_dy_xhat, ref.sum_abs_dy, ref.mean_abs_g, ref.mean_abs_g_xhat},
                 p, dy.widened, run.bound, k.dtype, dx, dgamma_out, nullptr,
                 keep_main_elements(run, ev, dx.values, given_or_own), extra.from_y());
  finish(ev, Op::rmsnorm_bwd, dx.values, ref.dx.exact, ref.stats, p.cols);
}

}  // namespace normcheck::evaluation
