// Every forward norm kernel, by its spec (op_spec.h: a table row's op and
// dtype name one, a version-2 plugin declares its own): every tensor in its
// spec's format, rows at the problem's row stride, each output held to the
// range its spec's rounding policy admits under the kernel's bound
// (spec_policy.h), and y measured against exact math beside it. A kernel
// that breaks its range is told which other rounding policies its outputs
// fit (policy_mismatch), and on request (EvaluateOptions::identify) how
// every candidate policy fits them. A quantized y (op_spec.h, Quantization)
// is held code by code to the codes its policy admits under the scale it was
// cast by, and a dynamic scale to its own range (spec_policy.h); its figures
// against exact math are in codes, its normwise figures those of the
// dequantized values.
#include <algorithm>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <variant>

#include "normcheck/bounds.h"
#include "normcheck/float_format.h"
#include "normcheck/invoke.h"
#include "normcheck/metrics.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_scale.h"
#include "normcheck/spec_policy.h"
#include "simd/thread_pool.h"
#include "nonfinite.h"
#include "op.h"
#include "scale.h"
#include "tensor.h"

namespace normcheck::evaluation {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The values of `v` in format t (16-bit: rounded to nearest even).
std::vector<float> stored(DType t, const std::vector<float>& v) { return store(t, v).widened; }

}  // namespace

void evaluate_spec_fwd(const OpRun& run, Evaluation& ev) {
  const Kernel& k = run.kernel;
  const Problem& p = run.problem;
  const OpSpec spec = spec_of(k);
  ev.spec = to_text(spec);
  if (spec.quant) ev.quantized = spec.quant->cast;
  // a reference given for a table row's problem must fit it; the fast phase
  // (spec_reference_fast.h) recomputes it at the cost of the float reference
  if (run.options.reference) require_fits(*run.options.reference, k, p);
  const auto dt = [&](TensorName t) { return spec.dtype_of(t); };
  const int64_t stride = p.row_stride ? p.row_stride : p.cols;

  const std::vector<float> x = stored(dt(TensorName::x), p.x);
  const std::vector<float> residual = spec.add ? stored(dt(TensorName::residual), p.residual) : std::vector<float>();
  const std::vector<float> gamma = spec.has(TensorName::gamma) ? stored(dt(TensorName::gamma), p.gamma) : std::vector<float>();
  const std::vector<float> beta = spec.has(TensorName::beta) ? stored(dt(TensorName::beta), p.beta) : std::vector<float>();

  const ArrayLayout& layout = run.layout;
  // inputs' padding NaN (a row that reads it gives NaN); outputs all sentinel
  Tensor x_in(dt(TensorName::x), p.rows, p.cols, stride, layout, x);
  std::optional<Tensor> res_in, gamma_in, beta_in, res_out, mean_out, stat_out;
  if (spec.add) res_in.emplace(dt(TensorName::residual), p.rows, p.cols, stride, layout, residual);
  if (!gamma.empty()) gamma_in.emplace(dt(TensorName::gamma), 1, p.cols, p.cols, layout, gamma);
  if (!beta.empty()) beta_in.emplace(dt(TensorName::beta), 1, p.cols, p.cols, layout, beta);
  // a quantized y: its codes, and the scale (the problem's static one, an
  // input, or the kernel's per row or block, an output)
  const std::optional<Quantization>& quant = spec.quant;
  const int64_t scales = quant ? scales_per_row(*quant, p.cols) : 0;
  Tensor y_out = quant ? Tensor(quant->cast, p.rows, p.cols, stride, layout)
                       : Tensor(dt(TensorName::y), p.rows, p.cols, stride, layout);
  std::optional<Tensor> scale_in, scale_out, scale_inv_out, amax_out;
  if (quant && !quant->dynamic()) scale_in.emplace(DType::f32, 1, 1, 1, layout, std::vector<float>{p.scale});
  if (quant && quant->dynamic()) scale_out.emplace(DType::f32, p.rows, scales, scales, layout);
  if (quant && quant->apply == ScaleApply::multiply) scale_inv_out.emplace(DType::f32, 1, 1, 1, layout);
  if (quant && quant->amax) amax_out.emplace(DType::f32, 1, 1, 1, layout);
  if (spec.add) res_out.emplace(dt(TensorName::residual_out), p.rows, p.cols, stride, layout);
  if (spec.has(TensorName::mean)) mean_out.emplace(dt(TensorName::mean), p.rows, 1, 1, layout);
  if (spec.has(TensorName::stat)) stat_out.emplace(dt(TensorName::stat), p.rows, 1, 1, layout);

  KernelArgs args{.rows = p.rows, .cols = p.cols, .eps = p.eps};
  args.row_stride = p.row_stride;
  args.x = x_in.data();
  args.residual = res_in ? res_in->data() : nullptr;
  args.gamma = gamma_in ? gamma_in->data() : nullptr;
  args.beta = beta_in ? beta_in->data() : nullptr;
  args.out = y_out.data();
  args.residual_out = res_out ? res_out->data() : nullptr;
  args.mean = mean_out ? mean_out->data() : nullptr;
  args.stat = stat_out ? stat_out->data() : nullptr;
  args.scale = scale_in ? scale_in->data() : scale_out ? scale_out->data() : nullptr;
  args.scale_inv = scale_inv_out ? scale_inv_out->data() : nullptr;
  args.amax = amax_out ? amax_out->data() : nullptr;
  if (run.options.around_call) run.options.around_call(true, run.options.context);
  invoke(k, args);
  if (run.options.around_call) run.options.around_call(false, run.options.context);

  const Readback y = y_out.read();
  const Readback empty;
  const Readback sum = res_out ? res_out->read() : empty, mean = mean_out ? mean_out->read() : empty,
                 stat = stat_out ? stat_out->read() : empty, scale = scale_out ? scale_out->read() : empty,
                 scale_inv = scale_inv_out ? scale_inv_out->read() : empty, amax = amax_out ? amax_out->read() : empty;
  // outside the arrays: a guard zone, or the padding between rows
  const auto input_kept = [](const Tensor& t) { return t.guards_intact() && t.padding_unchanged(); };
  const auto output_kept = [](const Tensor& t) { return t.guards_intact() && t.padding_kept(); };
  const auto all = [](const std::initializer_list<const std::optional<Tensor>*> tensors, auto kept) {
    for (const std::optional<Tensor>* t : tensors)
      if (*t && !kept(**t)) return false;
    return true;
  };
  ev.out_of_bounds_write = !input_kept(x_in) || !output_kept(y_out) ||
                           !all({&res_in, &gamma_in, &beta_in, &scale_in}, input_kept) ||
                           !all({&res_out, &mean_out, &stat_out, &scale_out, &scale_inv_out, &amax_out}, output_kept);
  ev.wrote_input = !x_in.rows_unchanged() ||
                   !all({&res_in, &gamma_in, &beta_in, &scale_in}, [](const Tensor& t) { return t.rows_unchanged(); });
  ev.unwritten_output = y.unwritten || sum.unwritten || mean.unwritten || stat.unwritten || scale.unwritten ||
                        scale_inv.unwritten || amax.unwritten;
  const auto cols_per_row = static_cast<std::size_t>(p.cols);
  Digests digests = digests_of(p.rows, {{&y, cols_per_row}, {&sum, cols_per_row}, {&mean, 1}, {&stat, 1},
                                        {&scale, static_cast<std::size_t>(scales)}},
                               {&scale_inv, &amax});
  ev.output_digest = digests.output;
  ev.row_digests = std::move(digests.rows);
  if (run.options.outputs_only) return;

  // Three references, each computed once: exact math (no rounding point),
  // the policy's own result, and the sum-only policy the admissible ranges
  // start from; a spec without rounding points has one for all three.
  // the scale a quantized y's codes are judged against: the static one, or the kernel's own
  const std::vector<float> judged_scale = !quant ? std::vector<float>()
                                          : quant->dynamic() ? scale.values : std::vector<float>{p.scale};
  const SpecInputs in{p.rows, p.cols, x, residual, gamma, beta, p.eps, judged_scale};
  OpSpec bare = spec;
  for (auto& point : bare.round) point.reset();
  const OpSpec sum_only = spec_sum_only(spec);
  const SpecForwardReference math = spec_reference_fwd(bare, in, SpecResult::exact_math);
  std::optional<SpecForwardReference> own_storage, sum_only_storage;
  if (!(spec == bare)) own_storage = spec_reference_fwd(spec, in, SpecResult::policy);
  const SpecForwardReference& own = own_storage ? *own_storage : math;
  if (!(sum_only == bare) && !(sum_only == spec)) sum_only_storage = spec_reference_fwd(sum_only, in, SpecResult::policy);
  const SpecForwardReference& start = sum_only_storage ? *sum_only_storage : sum_only == bare ? math : own;
  const SpecAdmissible admissible = spec_admissible_fwd(spec, in, run.bound, &start);

  const auto cols = static_cast<std::size_t>(p.cols);
  const DType y_t = dt(TensorName::y);
  const bool layer = spec.norm == NormKind::layernorm;
  const Op op = layer ? Op::layernorm_fwd : Op::rmsnorm_fwd;
  // each row as the row rules see it (evaluate.h, row_checked)
  std::vector<RowStats> stats(static_cast<std::size_t>(p.rows));
  // a row is non-finite when an input of the norm is: x or residual, or
  // under round=sum:T a stored sum past T's range (start has that rounding)
  for (std::size_t r = 0; r < stats.size(); ++r) {
    stats[r].finite = math.finite[r] != 0 && start.finite[r] != 0;
    stats[r].r = math.condition[r].r;
    stats[r].mean_abs_x = math.mean_abs_s[r];
    stats[r].condition = math.condition[r];
  }
  // y's row scale (scale.h), with the weight 1 + gamma_j under weight=1+gamma
  const auto weight = [&](std::size_t j) {
    return gamma.empty() ? 1.0 : spec.weight == Weight::one_plus_gamma ? 1.0 + gamma[j] : static_cast<double>(gamma[j]);
  };
  std::vector<double> column_weight(cols), column_beta(cols, 0.0);  // each column's, once
  for (std::size_t j = 0; j < cols; ++j) {
    column_weight[j] = weight(j);
    if (!beta.empty()) column_beta[j] = beta[j];
  }
  const auto y_scale_of = [&](std::size_t row, std::size_t j) {
    return y_scale(stats[row], column_weight[j], column_beta[j]);
  };
  MainElement* const kept = [&]() -> MainElement* {
    if (!run.options.keep_main_elements) return nullptr;
    ev.main_elements.resize(y.values.size());
    for (std::size_t i = 0; i < y.values.size(); ++i)
      ev.main_elements[i] = {y.values[i], math.y.exact[i], math.xhat[i], std::numeric_limits<double>::infinity()};
    return ev.main_elements.data();
  }();

  // A quantized y: the scale element i's code was cast by, and the scale of
  // exact math (the declared formula on the exact y of the row or block).
  const std::size_t group = quant && quant->scale == ScaleKind::per_block ? static_cast<std::size_t>(quant->group) : cols;
  const auto scale_of = [&](std::size_t i) -> double {
    if (!quant) return 1;
    return quant->dynamic() ? judged_scale[(i / cols) * static_cast<std::size_t>(scales) + (i % cols) / group]
                            : judged_scale[0];
  };
  std::vector<double> exact_scale;
  if (quant && quant->dynamic()) {
    exact_scale.assign(static_cast<std::size_t>(p.rows * scales), 0.0);
    for (std::size_t i = 0; i < math.y.exact.size(); ++i) {
      double& a = exact_scale[(i / cols) * static_cast<std::size_t>(scales) + (i % cols) / group];
      a = std::max(a, std::fabs(math.y.exact[i]));  // a NaN y's row or block is judged by the non-finite rule
    }
    for (double& a : exact_scale)
      a = std::max(std::min(a, static_cast<double>(quant->scale_ub)) / quant_max(quant->cast.format),
                   static_cast<double>(quant->scale_min));
  }
  // the code a policy's own y (in y's dtype) is cast to, and its distance in
  // codes from exact math's
  const auto codes_off = [&](const Quantization& q, double policy_y, double exact, double s) {
    return std::fabs(quant_position(q.cast.format, quantized_code(q, quant_t(q, policy_y, s))) -
                     quant_position(q.cast.format, quantized_code(q, exact_quant_t(q, exact, s))));
  };
  // A quantized y where t is not finite (docs/semantics.md, "Quantized
  // outputs on a non-finite row"): the codes the spec's convention writes
  // for a NaN or infinite t besides the format's non-finite ones.
  const std::vector<double> declared_codes = quant ? nonfinite_t_codes(*quant) : std::vector<double>();
  // the columns [first, last) of scale b of a row
  const auto block = [&](int64_t b) {
    const std::size_t first = static_cast<std::size_t>(b) * group;
    return std::pair{first, std::min(cols, first + group)};
  };
  // block b of row r has a y whose exact value is NaN (a NaN gamma or beta on a finite row)
  const auto block_has_nan = [&](std::size_t r, int64_t b) {
    for (auto [j, last] = block(b); j < last; ++j)
      if (std::isnan(math.y.exact[r * cols + j])) return true;
    return false;
  };

  // The tight standard beside the bound, on the realistic rows
  // (evaluate.h, realistic_row): the same ranges under the probabilistic
  // bound, checked by the same element rule in the same pass, into its own
  // figures (`tight_figures`). A quantized y's codes are held to the bound
  // alone: its range is one or two codes wide either way.
  std::vector<char> realistic;
  std::optional<SpecAdmissible> held;
  if (const BoundFn tight = tight_bound(run.bound); tight && !quant) {
    // centred scales for RMSNorm too: its sigma and |mean|/sigma say whether
    // its sums' roundings are random. A LayerNorm's s without `add` is the
    // one exact math normalized, whose statistics the reference has for each
    // row it took (a row it did not take with a non-finite input is not
    // realistic); with `add`, exact math's s is the exact sum, not the
    // kernel's.
    const std::vector<float> s = norm_inputs(k, p);
    const bool reuse = layer && !spec.add && [&] {
      for (std::size_t r = 0; r < stats.size(); ++r)
        if (!math.s_stats_known[r] && stats[r].finite) return false;
      return true;
    }();
    std::vector<RowScale> centred;
    if (!reuse) {
      centred = row_scales(Op::layernorm_fwd, s, p.rows, p.cols, p.eps);
    } else {
      centred.resize(stats.size(), RowScale{.finite = false});
      for (std::size_t r = 0; r < stats.size(); ++r)
        if (math.s_stats_known[r]) centred[r] = row_scale(Op::layernorm_fwd, math.s_stats[r]);
    }
    realistic.assign(stats.size(), 0);
    for (std::size_t r = 0; r < stats.size(); ++r) {
      realistic[r] = stats[r].finite && row_checked(op, stats[r]) &&
                     realistic_row(centred[r], std::span<const float>(s).subspan(r * cols, cols));
      ev.tight_rows += realistic[r];
    }
    if (ev.tight_rows > 0) held = spec_admissible_fwd(spec, in, tight, &start);
  }
  // Exact math against a policy's own quantized y, in codes: element j of
  // row r (i = r cols + j: no division per element). Over the elements that
  // are promised a range, as the kernel's own figure: not on an ill-posed row
  // (row_checked), nor where the scale says nothing (not a positive float,
  // or an inverse past float32's range: spec_policy.h), where the declared
  // arithmetic's code is far from exact math's.
  const auto code_distance = [&](const SpecForwardReference& policy, std::size_t r, std::size_t j) {
    const std::size_t i = r * cols + j;
    if (!std::isfinite(math.y.exact[i]) || !std::isfinite(policy.y.rounded[i]) || !row_checked(op, stats[r]) ||
        (admissible.y.lo[i] == -kInfinity && admissible.y.hi[i] == kInfinity))
      return 0.0;
    return codes_off(*quant, policy.y.rounded[i], math.y.exact[i], scale_of(i));
  };
  // Row r's y scales (y_scale_of) in a buffer of the calling thread's, valid
  // until its next call there: the rows' checks run on the thread pool.
  const auto row_y_scales = [&](std::size_t r) -> const double* {
    thread_local std::vector<double> ys;
    ys.resize(cols);
    for (std::size_t j = 0; j < cols; ++j) ys[j] = y_scale_of(r, j);
    return ys.data();
  };
  // How far a policy's own y is from exact math over row r: the largest
  // code_distance of a quantized y, else the largest scaled ULP error
  // (scaled_ulp_error, metrics.h) at the row's y scales `ys`, the row's
  // figures taken at once (row_ulp_figures: ulp_figures' values, in
  // vectors). Elements where either value is non-finite, and rows with a
  // non-finite input, have no distance.
  const auto row_distance = [&](const SpecForwardReference& policy, std::size_t r, const double* ys) {
    double m = 0;
    if (!stats[r].finite) return m;
    if (quant) {
      for (std::size_t j = 0; j < cols; ++j) m = std::max(m, code_distance(policy, r, j));
      return m;
    }
    thread_local std::vector<float> policy_y;
    thread_local std::vector<double> scaled, elementwise;
    policy_y.resize(cols);
    scaled.resize(cols);
    elementwise.resize(cols);
    const std::size_t base = r * cols;
    for (std::size_t j = 0; j < cols; ++j) policy_y[j] = static_cast<float>(policy.y.rounded[base + j]);
    row_ulp_figures(y_t, policy_y, math.y.exact.data() + base, ys, scaled.data(), elementwise.data());
    for (std::size_t j = 0; j < cols; ++j)
      if (std::isfinite(math.y.exact[base + j]) && std::isfinite(policy.y.rounded[base + j]))
        m = std::max(m, scaled[j]);
    return m;
  };
  // the largest row_distance over every row: chunks of rows on the
  // kernels' thread pool (on this thread below simd::kParallelCheckElements),
  // the maximum of theirs (the same for every thread count)
  const auto largest_distance = [&](const SpecForwardReference& policy) {
    const int64_t chunks = simd::check_chunks(p.rows, p.cols);
    std::vector<double> largest(static_cast<std::size_t>(chunks), 0.0);
    simd::parallel_for(chunks, [&](int64_t c) {
      double m = 0;
      for (auto r = static_cast<std::size_t>(simd::chunk_first_row(p.rows, chunks, c));
           r < static_cast<std::size_t>(simd::chunk_first_row(p.rows, chunks, c + 1)); ++r)
        m = std::max(m, row_distance(policy, r, quant ? nullptr : row_y_scales(r)));
      largest[static_cast<std::size_t>(c)] = m;
    });
    return *std::max_element(largest.begin(), largest.end());
  };
  // One pass over the outputs: each element against the bound's range, and
  // on a realistic row against the tight standard's (into `tight_figures`);
  // beside them, the declared policy's own y against exact math
  // (own_distance: each row's largest, written by the row alone).
  Evaluation tight_figures;
  std::vector<double> own_distance(stats.size(), 0.0);
  Tally under_bound(ev, run.options.nonfinite), under_tight(tight_figures, run.options.nonfinite);
  under_bound.rows_beside(under_tight, p.rows, p.cols, [&](Tally& tally, Tally& tight_tally, int64_t row) {
    const auto r = static_cast<std::size_t>(row);
    if (spec.add)
      for (std::size_t i = r * cols; i < (r + 1) * cols; ++i)
        tally.range_element("residual_out", row, static_cast<int64_t>(i - r * cols), sum.values[i],
                            admissible.residual_out.lo[i], admissible.residual_out.hi[i],
                            math.residual_out.exact[i], dt(TensorName::residual_out), std::nullopt);
    const char* stat_name = layer ? "rstd" : "rrms";
    if (!stats[r].finite) {
      // A non-finite input (docs/semantics.md; evaluate.h, NonFinite). The
      // mean is the extended-real mean, whose NaN or infinity depends on the
      // summation: non-finite. LayerNorm's rstd is not checked: the variance
      // has no extended-real value, and the standard forms give it as NaN,
      // +inf or 0 (so rstd NaN, +0 or eps^-1/2). RMSNorm's IEEE evaluation
      // on a row of infinities gives rrms = +0 and y_j = +-0 for finite s_j
      // (nonfinite.h); every other element is non-finite.
      std::vector<float> s(cols);
      for (std::size_t j = 0; j < cols; ++j) s[j] = norm_input(spec, x[r * cols + j], spec.add ? residual[r * cols + j] : 0.0f);
      const bool infinities = !layer && only_infinities(s);
      if (mean_out) tally.nonfinite_element("mean", row, -1, mean.values[r], NAN);
      if (stat_out && !layer) tally.nonfinite_row_element(stat_name, row, -1, stat.values[r], ieee_rrms(infinities));
      const auto ieee_y = [&](std::size_t j) {
        return !layer && beta.empty() ? ieee_rmsnorm_y(infinities, s[j], weight(j)) : std::nullopt;
      };
      // A quantized y: every form of the row has a NaN y (docs/semantics.md),
      // so a scale taken over the whole row is NaN; a block's scale has the
      // IEEE value max(fl32(0 / qmax), scale_min) where every y of the block
      // is the IEEE +-0, and is NaN otherwise. A code is judged as the t it
      // stands for: non-finite, or the IEEE zero's code where its y is +-0
      // and its scale says something (spec_policy.h, scale_judged).
      if (quant && quant->dynamic())
        for (int64_t b = 0; b < scales; ++b) {
          bool zeros = true;
          for (auto [j, last] = block(b); j < last; ++j) zeros = zeros && ieee_y(j).has_value();
          const std::optional<double> ieee =
              zeros ? std::optional<double>(std::max(0.0, static_cast<double>(quant->scale_min))) : std::nullopt;
          const std::size_t k = r * static_cast<std::size_t>(scales) + static_cast<std::size_t>(b);
          tally.nonfinite_row_element("scale", row, b, scale.values[k], ieee);
        }
      for (std::size_t j = 0; j < cols; ++j) {
        if (kept) kept[r * cols + j].allowed = 0;
        if (quant) {
          const std::optional<double> zero = ieee_y(j);
          tally.nonfinite_code_element("y", row, static_cast<int64_t>(j), y.values[r * cols + j],
                                       zero && scale_judged(*quant, scale_of(r * cols + j)) ? zero : std::nullopt,
                                       declared_codes);
          continue;
        }
        tally.nonfinite_row_element("y", row, static_cast<int64_t>(j), y.values[r * cols + j], ieee_y(j));
      }
      return;
    }
    if (mean_out)
      tally.range_element("mean", row, -1, mean.values[r], admissible.mean.lo[r], admissible.mean.hi[r],
                          math.mean.exact[r], dt(TensorName::mean), std::nullopt);
    if (!row_checked(op, stats[r])) {  // ill-posed: nothing promised (the ranges are the whole line)
      own_distance[r] = row_distance(own, r, quant ? nullptr : row_y_scales(r));
      return;
    }
    if (stat_out) {
      const auto [lo, hi] = admissible.stat.ends_for(r, stat.values[r]);  // a rounded statistic: a value of its format
      tally.range_element(stat_name, row, -1, stat.values[r], lo, hi, math.stat.exact[r], dt(TensorName::stat),
                          std::nullopt);
    }
    if (quant && quant->dynamic())
      for (int64_t b = 0; b < scales; ++b) {
        const std::size_t k = r * static_cast<std::size_t>(scales) + static_cast<std::size_t>(b);
        if (block_has_nan(r, b))  // the maximum over a NaN is NaN: a finite scale skipped it
          tally.nonfinite_element("scale", row, b, scale.values[k], NAN);
        else
          tally.range_element("scale", row, b, scale.values[k], admissible.scale.lo[k], admissible.scale.hi[k],
                              exact_scale[k], DType::f32, std::nullopt);
      }
    const bool tight_row = held && realistic[r];
    if (tight_row && mean_out)
      tight_tally.range_element("mean", row, -1, mean.values[r], held->mean.lo[r], held->mean.hi[r],
                                math.mean.exact[r], dt(TensorName::mean), std::nullopt);
    if (tight_row && stat_out) {
      const auto [lo, hi] = held->stat.ends_for(r, stat.values[r]);
      tight_tally.range_element(stat_name, row, -1, stat.values[r], lo, hi, math.stat.exact[r], dt(TensorName::stat),
                                std::nullopt);
    }
    if (!quant) {
      // y: the row at once against each standard's ranges, ULP figures at y's row scale
      const std::size_t base = r * cols;
      const double* ys = row_y_scales(r);
      own_distance[r] = row_distance(own, r, ys);
      const std::span<const float> y_row = std::span<const float>(y.values).subspan(base, cols);
      const double* exact_row = math.y.exact.data() + base;
      tally.range_row("y", row, y_row, admissible.y.lo.data() + base, admissible.y.hi.data() + base, exact_row, y_t,
                      ys);
      if (tight_row)
        tight_tally.range_row("y", row, y_row, held->y.lo.data() + base, held->y.hi.data() + base, exact_row, y_t,
                              nullptr);
      // the allowance the range amounts to around the exact value (NaN: a non-finite gamma or beta's IEEE value)
      if (kept)
        for (std::size_t i = base; i < base + cols; ++i) {
          const double exact = math.y.exact[i];
          kept[i].allowed =
              std::isfinite(exact) ? std::max(admissible.y.hi[i] - exact, exact - admissible.y.lo[i]) : NAN;
        }
      return;
    }
    double distance = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t i = r * cols + j;
      const double lo = admissible.y.lo[i], hi = admissible.y.hi[i], exact = math.y.exact[i];
      distance = std::max(distance, code_distance(own, r, j));
      if (std::isnan(exact)) {  // a NaN y (a NaN gamma or beta): its t is NaN
        tally.nonfinite_code_element("y", row, static_cast<int64_t>(j), y.values[i], std::nullopt, declared_codes);
        if (kept) kept[i].allowed = 0;
        continue;
      }
      // codes, against the exact y over the scale they were cast by
      tally.code_element("y", row, static_cast<int64_t>(j), y.values[i], lo, hi,
                         exact_quant_t(*quant, exact, scale_of(i)), quant->cast);
      if (kept) kept[i].allowed = std::numeric_limits<double>::infinity();  // no promise in y's units
    }
    own_distance[r] = distance;
  });
  // The outputs of a quantized y that are one float for the tensor:
  // scale_inv = fl32(1 / s) of the given scale (scale_apply=multiply), one
  // value, and the amax over every y (spec_policy.h, SpecAdmissible::amax):
  // NaN where a y is NaN, a finite value there having skipped it.
  if (scale_inv_out || amax_out) {
    Tally tally(ev, run.options.nonfinite);
    if (scale_inv_out) {
      const double v = round_to_format(DType::f32, 1.0 / static_cast<double>(p.scale));
      tally.range_element("scale_inv", 0, -1, scale_inv.values[0], v, v, 1.0 / static_cast<double>(p.scale),
                          DType::f32, std::nullopt);
    }
    if (amax_out) {
      // a NaN y: on a row with a non-finite input, or (a NaN gamma) on a row held to its ranges
      double exact = 0;
      bool nan_y = false;
      for (std::size_t i = 0; i < math.y.exact.size(); ++i) {
        const std::size_t r = i / cols;
        const bool judged = stats[r].finite && row_checked(op, stats[r]);
        nan_y = nan_y || !stats[r].finite || (judged && std::isnan(math.y.exact[i]));
        if (judged) exact = std::max(exact, std::fabs(math.y.exact[i]));
      }
      if (nan_y || std::isnan(admissible.amax.lo[0]))
        tally.nonfinite_element("amax", 0, -1, amax.values[0], NAN);
      else
        tally.range_element("amax", 0, -1, amax.values[0], admissible.amax.lo[0], admissible.amax.hi[0], exact,
                            DType::f32, std::nullopt);
    }
  }
  // the normwise figures of a quantized y are those of its dequantized values, code times scale
  std::vector<float> dequantized;
  if (quant)
    for (std::size_t i = 0; i < y.values.size(); ++i)
      dequantized.push_back(static_cast<float>(normcheck::dequantized(*quant, y.values[i], scale_of(i))));
  finish(ev, op, quant ? dequantized : y.values, math.y.exact, stats, p.cols);
  // the rounding policies are tried against the bound alone: a kernel within
  // it follows its declared policy there, whatever the tight standard says
  const bool policy_failure = !ev.pass && !ev.out_of_bounds_write && !ev.unwritten_output && !ev.wrote_input;
  if (held) {
    ev.max_error_over_tight = tight_figures.max_error_over_bound;
    ev.tight_worst = tight_figures.worst;
    if (ev.max_error_over_tight > 1) ev.pass = false;
  }
  // exact math: the kernel's y (max_ulp, from the range checks; codes for a
  // quantized y) and the policy's own y
  ev.exact_math_ulp = ev.max_ulp;
  for (const double d : own_distance) ev.policy_exact_math_ulp = std::max(ev.policy_exact_math_ulp, d);
  if (!run.options.identify && !policy_failure) return;
  // the candidate policies against the outputs: which admit them
  const SpecOutputs outputs{std::vector<double>(y.values.begin(), y.values.end()),
                            std::vector<double>(sum.values.begin(), sum.values.end()),
                            std::vector<double>(mean.values.begin(), mean.values.end()),
                            std::vector<double>(stat.values.begin(), stat.values.end()),
                            std::vector<double>(scale.values.begin(), scale.values.end())};
  const SpecInputs one[] = {in};
  const SpecOutputs outs[] = {outputs};
  // a quantized y: first the declared cast done another way (the rounding
  // policy is then the declared one); identify asks which admit the codes
  // whatever the verdict, to tell the casts apart
  if (policy_failure || run.options.identify)
    for (const OpSpec& v : cast_variants(spec))
      if (check_policy(v, spec_admissible_fwd(v, in, run.bound, &start), outputs).outside == 0)
        ev.consistent_casts.push_back(to_text(v));
  if (!run.options.identify && !ev.consistent_casts.empty()) return;
  for (const PolicyMatch& m : identify_fwd(spec, one, outs, run.bound)) {
    if (policy_failure && ev.consistent_casts.empty() && m.explains() && !(m.policy == spec))
      ev.consistent_policies.push_back(to_text(m.policy));
    if (!run.options.identify) continue;
    Evaluation::PolicyFit fit{to_text(m.policy), m.check.outside, 0};
    const SpecForwardReference theirs = spec_reference_fwd(m.policy, in, SpecResult::policy);
    fit.exact_math_ulp = std::max(fit.exact_math_ulp, largest_distance(theirs));
    ev.policy_fits.push_back(std::move(fit));
  }
}

}  // namespace normcheck::evaluation
