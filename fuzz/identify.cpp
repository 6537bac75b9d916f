#include "identify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "case_gen.h"
#include "kernel_host.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/spec_policy.h"
#include "normcheck/spec_reference.h"

namespace normcheck::fuzz {
namespace {

// The rows of identify's largest batch: 64 partials of the 64-row blocks
// the training examples declare (reduce=block:64:P), where a partial's
// format shows, and far past the rows after which a bf16 running sum stops
// growing: with 8 significant bits, half its spacing reaches a term t once
// the sum is 256 t, after some 256 rows of like terms.
constexpr int64_t kMaxManyRows = 4096;

}  // namespace

const PolicyVerdict& Identification::declared_verdict() const {
  for (const PolicyVerdict& v : policies)
    if (v.policy == declared) return v;
  throw std::logic_error("identify: the declared policy is not among the candidates");
}

namespace {

// Whether the two ranges of an element share no value: both bounded and
// finite there, and apart. A statistic stored before or after its rounding
// point is held to the hull of both ranges (AdmissibleRange::ends_for).
bool apart(const AdmissibleRange& a, const AdmissibleRange& b) {
  const std::size_t n = std::min(a.lo.size(), b.lo.size());
  const auto hull = [](const AdmissibleRange& r, std::size_t i) {
    double lo = r.lo[i], hi = r.hi[i];
    if (i < r.before_lo.size()) lo = std::min(lo, r.before_lo[i]), hi = std::max(hi, r.before_hi[i]);
    return std::pair{lo, hi};
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto [alo, ahi] = hull(a, i);
    const auto [blo, bhi] = hull(b, i);
    if (!std::isfinite(alo) || !std::isfinite(ahi) || !std::isfinite(blo) || !std::isfinite(bhi)) continue;
    if (ahi < blo || bhi < alo) return true;
  }
  return false;
}

bool apart(const SpecAdmissible& a, const SpecAdmissible& b) {
  return apart(a.y, b.y) || apart(a.residual_out, b.residual_out) || apart(a.mean, b.mean) ||
         apart(a.stat, b.stat) || apart(a.scale, b.scale);
}

// A problem's inputs as a kernel of `spec` reads them: each in its format.
struct StoredInputs {
  std::vector<float> x, residual, gamma, beta, scale;
  SpecInputs inputs;
  StoredInputs(const OpSpec& spec, const Problem& p) {
    const auto stored = [&spec](TensorName t, const std::vector<float>& v) {
      std::vector<float> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(round_to_format(spec.dtype_of(t), v[i]));
      return out;
    };
    x = stored(TensorName::x, p.x);
    if (spec.add) residual = stored(TensorName::residual, p.residual);
    if (spec.has(TensorName::gamma) && !p.gamma.empty()) gamma = stored(TensorName::gamma, p.gamma);
    if (spec.has(TensorName::beta) && !p.beta.empty()) beta = stored(TensorName::beta, p.beta);
    if (spec.quant && !spec.quant->dynamic()) scale = {p.scale};
    inputs = SpecInputs{p.rows, p.cols, x, residual, gamma, beta, p.eps, scale};
  }
  // A dynamic scale the ranges of y's codes are built on (a kernel's own, in evaluate()).
  StoredInputs(const OpSpec& spec, const Problem& p, std::vector<float> dynamic) : StoredInputs(spec, p) {
    scale = std::move(dynamic);
    inputs.scale = scale;
  }
};

// The declared policy's pre-cast y on problem `p` (y in its dtype, before
// the quantization), or empty where the reference refuses the problem.
std::vector<double> precast_y(const OpSpec& declared, const Problem& p) {
  OpSpec precast = declared;
  precast.quant.reset();
  const StoredInputs in(precast, p);
  try {
    return spec_reference_fwd(precast, in.inputs, SpecResult::policy).y.rounded;
  } catch (const std::invalid_argument&) {
    return {};
  }
}

// The dynamic scales a kernel following the declared policy writes on `p`
// (op_spec.h, Quantization): per row or block, s = max(fl32(min(a, ub) /
// qmax), scale_min) with a the largest |y| of the policy's pre-cast y there.
std::vector<float> policy_scales(const OpSpec& declared, const Problem& p) {
  const Quantization& q = *declared.quant;
  const std::vector<double> y = precast_y(declared, p);
  if (y.empty()) return {};
  const auto cols = static_cast<std::size_t>(p.cols);
  const auto per_row = static_cast<std::size_t>(scales_per_row(q, p.cols));
  const std::size_t group = q.scale == ScaleKind::per_block ? static_cast<std::size_t>(q.group) : cols;
  std::vector<float> scales(static_cast<std::size_t>(p.rows) * per_row, 0.0f);
  std::vector<double> amax(scales.size(), 0.0);
  for (std::size_t i = 0; i < y.size(); ++i) {
    double& a = amax[(i / cols) * per_row + (i % cols) / group];
    a = std::max(a, std::fabs(y[i]));
  }
  for (std::size_t k = 0; k < scales.size(); ++k)
    scales[k] = std::max(
        static_cast<float>(std::min(amax[k], static_cast<double>(q.scale_ub)) / quant_max(q.cast.format)), q.scale_min);
  return scales;
}

// Static scales for problem `p` that put t_i (y_i / s; y_i s under
// scale_apply=multiply) of one element (chosen by `attempt`) on a boundary of
// the cast's rounding (a tie between two codes) or past its largest value:
// where the ways of applying the scale, the tie rules and saturation give
// different codes. y_i is the declared policy's y before the cast. Each
// candidate s is fl32(|y_i| / target) (fl32(target / |y_i|)) and its float
// neighbours, since the ways of applying it round on either side of a
// boundary only for some of them.
std::vector<float> boundary_scales(const OpSpec& declared, const Problem& p, int64_t attempt) {
  const std::vector<double> y = precast_y(declared, p);
  if (y.empty()) return {};
  const std::size_t i = static_cast<std::size_t>(attempt) % y.size();
  const double a = std::fabs(y[i]);
  if (!(a > 0) || !std::isfinite(a)) return {};
  const QuantFormat f = declared.quant->cast.format;
  const double qmax = quant_max(f);
  double target;
  if (attempt % 4 == 3) {
    target = qmax * 1.1;  // past the largest value: saturated or the overflow code
  } else {
    const double t0 = 1 + static_cast<double>((attempt * 37) % 97) / 97 * (qmax - 2);  // in [1, qmax - 1)
    const double spacing = quant_spacing(f, t0);
    target = std::floor(t0 / spacing) * spacing + spacing / 2;  // a tie between two codes
  }
  // t = y / s, or y s under scale_apply=multiply
  const float s0 = static_cast<float>(declared.quant->apply == ScaleApply::multiply ? target / a : a / target);
  if (!(s0 > 0) || !std::isfinite(s0)) return {};
  std::vector<float> out = {s0};
  float up = s0, down = s0;
  for (int k = 0; k < 4; ++k) {
    up = std::nextafter(up, INFINITY);
    down = std::nextafter(down, 0.0f);
    out.push_back(up);
    out.push_back(down);
  }
  return out;
}

// For a scale the kernel computes (s = max(fl32(min(a, ub) / qmax),
// scale_min) from the largest |y| a of its row or block), a problem on which
// `declared` and `other` cast some y to different codes, or none: a row whose
// xhat is +-1 (RMSNorm: x = 1; LayerNorm: x = +-1 alternating, mean 0): with
// eps = 0 exactly, so that y_i is gamma_i under every policy; with the
// kernel's least eps > 0 to within a bf16 ulp (xhat = (1 + eps)^(-1/2)), so
// that y_i is gamma_i under a policy that rounds xhat or y to 16 bits:
// gamma_0 = a sets the scale, gamma_1 = y the element that splits them, found
// by trying the bf16 values a in [1, 2) and y in [a / 256, a) (the
// `attempt`-th pair whose codes differ; y / s and y fl32(1 / s) part across a
// boundary of the cast only where y / s is within a float ulp of it, or on a
// tie: a = 127 / 64 gives s = 1 / 64, and every y / s an exact half-integer).
// The admissible ranges decide in the end (apart()); under a policy whose
// y is not gamma there, this proposes problems that do not split.
std::optional<Problem> dynamic_boundary_problem(const OpSpec& declared, const OpSpec& other, int64_t attempt,
                                                float eps) {
  const Quantization &q = *declared.quant, &o = *other.quant;
  if (declared.weight != Weight::gamma) return std::nullopt;  // gamma must be y's value
  const double qmax = quant_max(q.cast.format);
  const auto scale_of = [&](double a) {
    return std::max(round_to_format(DType::f32, std::min(a, static_cast<double>(q.scale_ub)) / qmax),
                    static_cast<double>(q.scale_min));
  };
  int64_t found = 0;
  for (int am = 0; am < 128; ++am) {
    const double a = 1 + am / 128.0;  // the bf16 values of [1, 2)
    const double s = scale_of(a);
    for (int e = 1; e <= 8; ++e)
      for (int ym = 0; ym < 128; ++ym) {
        const double y = std::ldexp(1 + ym / 128.0, -e);
        if (quantized_code(q, quant_t(q, y, s)) == quantized_code(o, quant_t(o, y, s))) continue;
        if (found++ < attempt) continue;
        Problem p;
        p.rows = 1;
        p.cols = 16;
        p.eps = eps;
        const bool centred = declared.norm == NormKind::layernorm;
        for (int64_t j = 0; j < p.cols; ++j) p.x.push_back(centred && j % 2 ? -1.0f : 1.0f);
        p.gamma.assign(static_cast<std::size_t>(p.cols), static_cast<float>(y / 2));
        p.gamma[0] = static_cast<float>(a);
        p.gamma[1] = static_cast<float>(y);
        if (declared.has(TensorName::beta)) p.beta.assign(static_cast<std::size_t>(p.cols), 0.0f);
        if (declared.add) p.residual.assign(static_cast<std::size_t>(p.cols), 0.0f);
        return p;
      }
  }
  return std::nullopt;
}

std::string problem_text(const Problem& p, bool scale) {
  char text[160];
  std::snprintf(text, sizeof text, "%lld x %lld, eps = %.3g%s", static_cast<long long>(p.rows),
                static_cast<long long>(p.cols), static_cast<double>(p.eps), scale ? ", static scale " : "");
  std::string s = text;
  if (scale) {
    std::snprintf(text, sizeof text, "%a", static_cast<double>(p.scale));
    s += text;
  }
  return s;
}

// A problem on which `declared` and `other` admit no common value of some
// output element, drawn from `problems` (and for a static scale, with the
// scale placed on a boundary of the cast), or none within kSplitTries draws.
std::optional<Problem> splitting_problem(const Kernel& kernel, const OpSpec& declared, const OpSpec& other,
                                         const rc::Gen<Problem>& problems, uint64_t seed, BoundFn bound,
                                         int64_t& tries) {
  const bool static_scale = declared.quant && !declared.quant->dynamic();
  const bool dynamic_scale = declared.quant && declared.quant->dynamic() && other.quant;
  for (tries = 1; tries <= kSplitTries; ++tries) {
    // a dynamic scale: every other try a row built to split the casts
    std::optional<Problem> built;
    if (dynamic_scale && tries % 2 == 1)
      built = dynamic_boundary_problem(declared, other, tries / 2, std::max(kernel.range.min_eps, 0.0f));
    Problem p = built ? *built : case_problem(problems, seed, 1, tries);
    std::vector<float> scales = {p.scale};
    if (static_scale) {
      scales = boundary_scales(declared, p, tries);
      scales.push_back(p.scale);
    }
    for (float s : scales) {
      p.scale = s;
      if (!declines(kernel, request_for(kernel, p)).empty()) continue;
      const StoredInputs in = declared.quant && declared.quant->dynamic()
                                  ? StoredInputs(declared, p, policy_scales(declared, p))
                                  : StoredInputs(declared, p);
      try {
        if (apart(spec_admissible_fwd(declared, in.inputs, bound), spec_admissible_fwd(other, in.inputs, bound)))
          return p;
      } catch (const std::invalid_argument&) {
        // a problem the references refuse for this spec: draw another
      }
    }
  }
  tries = kSplitTries;
  return std::nullopt;
}

}  // namespace

Identification identify(const Kernel& kernel, int64_t cases, uint64_t seed, int64_t max_d) {
  const OpSpec declared = spec_of(kernel);
  if (declared.linear)
    throw std::invalid_argument("identify: " + std::string(kernel.name) + " is not a norm kernel (a norm followed by a Linear)");
  Identification id;
  id.kernel = std::string(kernel.name);
  id.declared = declared;
  for (const OpSpec& policy : candidate_policies(id.declared))
    id.policies.push_back({policy, std::string(known_policy_name(policy))});
  for (const OpSpec& cast : cast_variants(id.declared)) id.casts.push_back({cast});
  // Finite rows and eps = 1e-6: where kernels fail alike (non-finite inputs,
  // squares that underflow at eps = 0) their outputs say nothing of where
  // they round, and fuzz and check judge those rows.
  props::GenOptions gen = generator_options(kernel);
  gen.max_d = max_d;
  // Every candidate's checks run on each problem (a backward has up to 72):
  // a backward's batches of many rows (campaign.cpp) stop at kMaxManyRows.
  gen.many_rows_max = std::min(gen.many_rows_max, kMaxManyRows);
  gen.nonfinite = false;
  gen.eps = 1e-6f;
  const rc::Gen<Problem> problems = props::gen_problem(gen);
  EvaluateOptions options;
  options.identify = true;
  // Runs one problem and counts it into every verdict; false when the call failed.
  const auto run = [&](const Problem& p) {
    Evaluation ev;
    try {
      ev = evaluate(kernel, p, options);
    } catch (const KernelCallFault& fault) {
      id.fault = fault.label + ": " + fault.what();
      return false;
    }
    id.problems.add(ev);
    if (!ev.declined.empty()) return true;
    id.exact_math_ulp = std::max(id.exact_math_ulp, ev.exact_math_ulp);
    for (const Evaluation::PolicyFit& fit : ev.policy_fits)
      for (PolicyVerdict& v : id.policies)
        if (to_text(v.policy) == fit.spec) {
          v.outside += fit.outside;
          // NaN: a backward policy, which has no result of its own (evaluate.h, PolicyFit)
          v.exact_math_ulp = std::isnan(fit.exact_math_ulp) ? fit.exact_math_ulp
                                                            : std::max(v.exact_math_ulp, fit.exact_math_ulp);
        }
    for (CastVerdict& c : id.casts)
      if (std::find(ev.consistent_casts.begin(), ev.consistent_casts.end(), to_text(c.cast)) ==
          ev.consistent_casts.end())
        ++c.problems_outside;
    return true;
  };
  for (int64_t c = 0; c < cases; ++c)
    if (!run(case_problem(problems, seed, 0, c))) return id;

  // The close candidates: split each from the declared policy where a problem can.
  if (declared.direction == Direction::bwd || id.problems.nothing_judged() || !id.declared_verdict().consistent())
    return id;
  // Small rows, where each policy's range is cheap to build; but for a
  // scale the kernel computes (its row's amax / qmax), which cannot be placed,
  // one row of 4096: y / s and y fl32(1 / s) part across a boundary of the
  // cast about once in 2^23 / |t| elements (a float ulp of t out of 1), so a
  // row that wide meets such an element within some tens of draws.
  props::GenOptions split_gen = gen;
  split_gen.max_d = std::min<int64_t>(max_d, 64);
  if (declared.quant && declared.quant->dynamic()) split_gen.shapes = {{1, 4096}};
  const rc::Gen<Problem> split_problems = props::gen_problem(split_gen);
  const BoundFn bound = kernel.bound ? kernel.bound : default_bound(kernel.op);
  std::vector<OpSpec> close;
  for (const PolicyVerdict& v : id.policies)
    if (v.consistent() && !(v.policy == declared)) close.push_back(v.policy);
  for (const CastVerdict& c : id.casts)
    if (c.consistent()) close.push_back(c.cast);
  for (const OpSpec& other : close) {
    Split split;
    split.other = to_text(other);
    if (const std::optional<Problem> p =
            splitting_problem(kernel, declared, other, split_problems, seed, bound, split.tries)) {
      if (!run(*p)) return id;
      split.found = true;
      split.problem = problem_text(*p, declared.quant && !declared.quant->dynamic());
    }
    id.splits.push_back(std::move(split));
  }
  return id;
}

}  // namespace normcheck::fuzz
