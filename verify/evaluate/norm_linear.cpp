// A norm followed by a Linear (layernorm_linear_fwd, rmsnorm_linear_fwd): z
// against z_allowance, output by output. x, gamma, beta, W and b sit in
// guarded arrays like every input; z (rows x out_features) is the main output.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

#include "allowance.h"
#include "kernel_call.h"
#include "normcheck/reference_linear.h"
#include "op.h"
#include "row_rules.h"
#include "scale.h"

namespace normcheck {

namespace evaluation {

void evaluate_norm_linear(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  if (k.dtype != DType::f32)
    throw std::invalid_argument("evaluate: " + std::string(k.name) + ": a norm followed by a Linear stores float32");
  if (run.options.keep_main_elements)
    throw std::invalid_argument("evaluate: keep_main_elements: z of a norm followed by a Linear has no one xhat");
  const StoredInput x = store(k.dtype, p.x);
  OptionalInput gamma(p.gamma, run.layout), beta(p.beta, run.layout), bias(p.bias, run.layout);
  FloatArray weight(p.weight, run.layout);
  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};
  args.gamma = gamma.pointer();
  args.beta = beta.pointer();
  args.weight = weight.data();
  args.bias = bias.pointer();
  args.out_features = p.out_features;
  const MainRun call = call_kernel(k, args, x, nullptr, run.layout, run.options);
  const Readback& z = call.out;
  ev.out_of_bounds_write = !call.memory_ok || !gamma.array.guards_intact() || !beta.array.guards_intact() ||
                           !bias.array.guards_intact() || !weight.guards_intact();
  ev.wrote_input = !call.inputs_kept || !gamma.array.holds(p.gamma) || !beta.array.holds(p.beta) ||
                   !bias.array.holds(p.bias) || !weight.holds(p.weight);
  ev.unwritten_output = z.unwritten;
  Digests digests = digests_of(p.rows, {{&z, static_cast<std::size_t>(p.out_features)}}, {});
  ev.output_digest = digests.output;
  ev.row_digests = std::move(digests.rows);
  if (run.options.outputs_only) return;
  ExactReference own;
  const ExactReference* given = run.options.reference;
  if (given) {
    require_fits(*given, k, p);
  } else {
    own = empty_reference(k, p);
    compute_main_reference(own, x.widened, {}, p);
  }
  const NormLinearReference& ref = (given ? *given : own).norm_linear;

  const auto cols = static_cast<std::size_t>(p.cols);
  tally_rows(ev, run.options.nonfinite, p.rows, p.cols + p.out_features, [&](Tally& tally, int64_t row) {
    const RowStats& s = ref.stats[static_cast<std::size_t>(row)];
    if (!row_checked(k.op, s)) return;
    const Bound b = run.bound(row_condition(s));
    const std::span<const double> xhat(ref.xhat.exact.data() + static_cast<std::size_t>(row) * cols, cols);
    for (int64_t i = 0; i < p.out_features; ++i) {
      const auto o = static_cast<std::size_t>(row * p.out_features + i);
      if (!s.finite) {
        // A non-finite x: the non-finite x_j enters every z as W_ij gamma_j
        // times NaN (xhat_j), or r = +0 times an infinite or NaN W'x, so z is
        // non-finite in every standard form, unfolded or folded.
        tally.nonfinite_row_element("z", row, i, z.values[o], std::nullopt);
        continue;
      }
      const std::span<const float> w_row = std::span<const float>(p.weight).subspan(static_cast<std::size_t>(i) * cols, cols);
      const double allowed =
          z_allowance(b, w_row, p.gamma, p.beta, xhat, ref.t[o], ref.s[o], ref.c_abs[o], ref.exact_error[o]);
      tally.element("z", row, i, z.values[o], ref.z[o], allowed, DType::f32,
                    z_scale(s.condition.kappa, w_row, p.gamma, ref.t[o]));
    }
  });
  finish(ev, k.op, z.values, ref.z, ref.stats, p.out_features);
}

}  // namespace evaluation
}  // namespace normcheck
