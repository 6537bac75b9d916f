// RMSNorm forward: y and rrms against the bound, row by row.
#include <span>

#include "allowance.h"
#include "kernel_call.h"
#include "nonfinite.h"
#include "op.h"
#include "row_rules.h"

namespace normcheck::evaluation {

void evaluate_rmsnorm_fwd(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  const StoredInput x = store(k.dtype, p.x);
  ExactReference own;
  const ExactReference& given_or_own = reference_before_the_call(run, x.widened, own);
  OptionalInput gamma(p.gamma, run.layout);
  FloatArray rrms(static_cast<std::size_t>(p.rows), run.layout, sentinel32());
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};
  args.gamma = gamma.pointer();
  args.stat = rrms.data();
  const MainRun call = call_kernel(k, args, x, nullptr, run.layout, run.options);
  const Readback& y = call.out;
  const Readback rrms_out = read(rrms);
  ev.out_of_bounds_write = !call.memory_ok || !gamma.array.guards_intact() || !rrms.guards_intact();
  ev.wrote_input = !call.inputs_kept || !gamma.array.holds(p.gamma);
  ev.unwritten_output = y.unwritten || rrms_out.unwritten;
  ev.output_digest = digest_of({&y, &rrms_out});
  ev.row_digests = row_digests_of(p.rows, {{&y, static_cast<std::size_t>(p.cols)}, {&rrms_out, 1}});
  if (run.options.outputs_only) return;
  if (&given_or_own == &own) compute_main_reference(own, x.widened, {}, p);
  const RmsNormFwdReference& ref = given_or_own.rmsnorm_fwd;
  MainElement* const kept = keep_main_elements(run, ev, y.values, given_or_own);

  const auto cols = static_cast<std::size_t>(p.cols);
  tally_rows(ev, run.options.nonfinite, p.rows, [&](Tally& tally, int64_t row) {
    const auto r = static_cast<std::size_t>(row);
    const RowStats& s = ref.stats[r];
    if (!row_checked(Op::rmsnorm_fwd, s)) return;
    const Bound b = run.bound(row_condition(s));
    if (s.finite) {
      tally.element("rrms", row, -1, rrms_out.values[r], ref.rrms.exact[r], stat_allowance(b, s), DType::f32,
                    std::nullopt);
    } else {
      // a non-finite x (nonfinite.h): rrms is +0 under IEEE on a row of infinities without NaN
      const std::span<const float> x_row(x.widened.data() + r * cols, cols);
      tally.nonfinite_row_element("rrms", row, -1, rrms_out.values[r], ieee_rrms(only_infinities(x_row)));
    }
    tally_y_row(tally, p, Op::rmsnorm_fwd, x.widened, {}, row, s, b, ref.xhat.exact, ref.y.exact, y, k.dtype,
                kept);
  });
  finish(ev, Op::rmsnorm_fwd, y.values, ref.y.exact, ref.stats, p.cols);
}

}  // namespace normcheck::evaluation
