// Every backward norm kernel (LayerNorm and RMSNorm), by its spec: dx, dgamma
// and dbeta against the kernel's bound from the forward's statistics, each
// tensor in its spec's format. The statistics are the forward's correctly
// rounded to float32 and then to their formats; gamma is the problem's in
// its format, and the exact gradient is taken with the weight w (gamma, or
// 1 + gamma). What the formats cost is backward_spec.h's. With `add`, the
// problem's residual is the gradient arriving at the forward's sum
// (dresidual): dx is held to the norm's gradient plus it, and the gradient
// written for the residual input ("dresidual") likewise. With
// EvaluateOptions::identify, every candidate policy of the spec
// (spec_policy.h) is held to the same outputs by the same checks, its words
// in place of the spec's (fit_policies).
#include <cstring>
#include <limits>
#include <optional>

#include "backward_spec.h"
#include "kernel_call.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_policy.h"
#include "op.h"
#include "simd/thread_pool.h"
#include "tensor.h"

namespace normcheck::evaluation {
namespace {

// Every candidate policy of `spec` (spec_policy.h, candidate_policies) held
// to the kernel's outputs by `tally_as`, the checks that judge the spec
// itself, with the candidate's words in place of the spec's: each fit counts
// the elements outside the candidate's allowances. The candidates are
// independent (each its own Tally on the same read-only outputs and
// reference), so they run on the kernels' thread pool; the counts do not
// depend on it. A backward policy has no result of its own to set against
// exact math (its allowances are around exact math), so its figure is NaN.
template <class TallyAs>
void fit_policies(const OpSpec& spec, NonFinite rule, const TallyAs& tally_as, Evaluation& ev) {
  const std::vector<OpSpec> policies = candidate_policies(spec);
  std::vector<int64_t> outside(policies.size());
  simd::parallel_for(static_cast<int64_t>(policies.size()), [&](int64_t c) {
    Evaluation scratch;
    Tally tally(scratch, rule);
    tally_as(tally, policies[static_cast<std::size_t>(c)], nullptr);
    outside[static_cast<std::size_t>(c)] = tally.outside();
  });
  for (std::size_t c = 0; c < policies.size(); ++c)
    ev.policy_fits.push_back({to_text(policies[c]), outside[c], std::numeric_limits<double>::quiet_NaN()});
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

void evaluate_bwd(const OpRun& given, Evaluation& ev) {
  const Kernel& k = given.kernel;
  const OpSpec spec = spec_of(k);
  const bool layer = k.op == Op::layernorm_bwd;
  const BackwardWeights weights = backward_weights(spec, given.problem.gamma);
  if (!weights.declined.empty()) {
    ev.declined = weights.declined;
    return;
  }
  // The reference is the gradient at w: a reference given for the problem's
  // own gamma is not it when the spec changes the weight.
  std::optional<Problem> reweighted;
  EvaluateOptions options = given.options;
  if (!same_bits(weights.w, given.problem.gamma)) {
    reweighted = given.problem;
    reweighted->gamma = weights.w;
    options.reference = nullptr;
  }
  const OpRun run{k, reweighted ? *reweighted : given.problem, given.bound, options, given.layout};
  const Problem& p = run.problem;
  const ArrayLayout& layout = run.layout;
  const auto dt = [&](TensorName t) { return spec.dtype_of(t); };

  BackwardStart start;
  ev.declined = start_backward(run, start);
  if (!ev.declined.empty()) return;
  const StoredInput &x = start.x, &dy = start.dy;
  const ExactReference& given_or_own = *start.reference;
  const ExactValues& stat = layer ? given_or_own.layernorm_fwd.rstd : given_or_own.rmsnorm_fwd.rrms;

  std::optional<Tensor> gamma_in, mean_in, stat_in, dgamma_out, dbeta_out, dres_in, dres_out;
  std::vector<float> dres;  // with `add`: the dresidual given, in its format
  if (spec.add) {
    dres = store(dt(TensorName::residual), p.residual).widened;
    dres_in.emplace(dt(TensorName::residual), p.rows, p.cols, p.cols, layout, dres);
    dres_out.emplace(dt(TensorName::residual_out), p.rows, p.cols, p.cols, layout);
  }
  if (!weights.gamma.empty()) gamma_in.emplace(dt(TensorName::gamma), 1, p.cols, p.cols, layout, weights.gamma);
  if (spec.has(TensorName::mean))
    mean_in.emplace(dt(TensorName::mean), p.rows, 1, 1, layout,
                    store(dt(TensorName::mean), given_or_own.layernorm_fwd.mean.rounded).widened);
  if (spec.has(TensorName::stat))
    stat_in.emplace(dt(TensorName::stat), p.rows, 1, 1, layout, store(dt(TensorName::stat), stat.rounded).widened);
  if (spec.has(TensorName::dgamma)) dgamma_out.emplace(dt(TensorName::dgamma), 1, p.cols, p.cols, layout);
  if (layer && spec.has(TensorName::dbeta)) dbeta_out.emplace(dt(TensorName::dbeta), 1, p.cols, p.cols, layout);
  const auto data = [](std::optional<Tensor>& t) { return t ? t->data() : nullptr; };

  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};  // eps: a version-2 backward gets it
  const BackwardExtraInputs extra(run, x.widened);  // a backward from=y: y and beta in place of x
  extra.pass_to(args);
  args.gamma = data(gamma_in);
  args.saved_mean = data(mean_in);
  args.saved_stat = data(stat_in);
  args.dgamma = data(dgamma_out);
  args.dbeta = data(dbeta_out);
  args.residual = data(dres_in);
  args.residual_out = data(dres_out);
  const MainRun call = call_kernel(k, args, x, &dy, layout, run.options);
  const Readback& dx = call.out;
  const Readback dgamma = dgamma_out ? dgamma_out->read() : Readback{};
  const Readback dbeta = dbeta_out ? dbeta_out->read() : Readback{};
  const Readback dres_written = dres_out ? dres_out->read() : Readback{};
  bool guards = call.memory_ok && extra.guards_intact(), inputs_kept = call.inputs_kept && extra.inputs_kept(p);
  for (const std::optional<Tensor>* t : {&gamma_in, &mean_in, &stat_in, &dres_in}) {
    if (!*t) continue;
    guards = guards && (*t)->guards_intact() && (*t)->padding_unchanged();
    inputs_kept = inputs_kept && (*t)->rows_unchanged();
  }
  for (const std::optional<Tensor>* t : {&dgamma_out, &dbeta_out, &dres_out})
    if (*t) guards = guards && (*t)->guards_intact() && (*t)->padding_kept();
  ev.out_of_bounds_write = !guards;
  ev.wrote_input = !inputs_kept;
  ev.unwritten_output = dx.unwritten || dgamma.unwritten || dbeta.unwritten || dres_written.unwritten;
  // dgamma, dbeta: sums over rows, whole outputs
  Digests digests = digests_of(p.rows, {{&dx, static_cast<std::size_t>(p.cols)},
                                        {&dres_written, static_cast<std::size_t>(p.cols)}},
                               {&dgamma, &dbeta});
  ev.output_digest = digests.output;
  ev.row_digests = std::move(digests.rows);
  if (run.options.outputs_only) return;

  Tally tally(ev, run.options.nonfinite);
  const BackwardOutputs outputs{dx, dgamma_out ? &dgamma : nullptr, dbeta_out ? &dbeta : nullptr,
                                dres_out ? &dres_written : nullptr};
  const std::vector<double>& norm_dx = layer ? given_or_own.layernorm_bwd.dx.exact : given_or_own.rmsnorm_bwd.dx.exact;
  // dx's exact value: the norm's gradient, plus the dresidual given with `add` (in double, within 2^-53)
  std::vector<double> dx_sum;
  if (spec.add) {
    dx_sum = norm_dx;
    for (std::size_t i = 0; i < dx_sum.size(); ++i) dx_sum[i] += dres[i];
  }
  const std::vector<double>& dx_exact = spec.add ? dx_sum : norm_dx;
  MainElement* kept = keep_main_elements(run, ev, dx.values, given_or_own);
  if (kept && spec.add)
    for (std::size_t i = 0; i < dx_sum.size(); ++i) kept[i].exact = dx_sum[i];
  // LayerNormBwdReference and RmsNormBwdReference alike (RMSNorm: no dbeta)
  const auto exact_of = [&](const auto& ref, const std::vector<double>* dbeta) {
    return BackwardExact{ref.stats,        ref.xhat.exact,     dx_exact,          ref.dgamma.exact, dbeta,
                         ref.sum_abs_dy_xhat, ref.sum_abs_dy, ref.mean_abs_g, ref.mean_abs_g_xhat};
  };
  const BackwardExact exact = layer ? exact_of(given_or_own.layernorm_bwd, &given_or_own.layernorm_bwd.dbeta.exact)
                                    : exact_of(given_or_own.rmsnorm_bwd, nullptr);
  // The checks of a policy: the spec's own, or a candidate's (its words widen the same bound).
  const auto tally_as = [&](Tally& t, const OpSpec& policy, MainElement* elements) {
    tally_backward(t, policy, k.op, exact, p, dy.widened, run.bound, k.dtype, outputs, elements, extra.from_y());
  };
  tally_as(tally, spec, kept);
  finish(ev, k.op, dx.values, dx_exact, exact.stats, p.cols);
  ev.exact_math_ulp = ev.max_ulp;  // the backward's reference is exact math
  if (run.options.identify) fit_policies(spec, run.options.nonfinite, tally_as, ev);
}

}  // namespace normcheck::evaluation
