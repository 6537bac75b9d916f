#include "identify.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "case_gen.h"
#include "kernel_host.h"
#include "normcheck/evaluate.h"
#include "normcheck/spec_policy.h"

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

Identification identify(const Kernel& kernel, int64_t cases, uint64_t seed, int64_t max_d) {
  const OpSpec declared = spec_of(kernel);
  if (declared.linear)
    throw std::invalid_argument("identify: " + std::string(kernel.name) + " is not a norm kernel (a norm followed by a Linear)");
  Identification id;
  id.kernel = std::string(kernel.name);
  id.declared = declared;
  for (const OpSpec& policy : candidate_policies(id.declared))
    id.policies.push_back({policy, std::string(known_policy_name(policy))});
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
  for (int64_t c = 0; c < cases; ++c) {
    const Problem p = case_problem(problems, seed, 0, c);
    Evaluation ev;
    try {
      ev = evaluate(kernel, p, options);
    } catch (const KernelCallFault& fault) {
      id.fault = fault.label + ": " + fault.what();
      return id;
    }
    id.problems.add(ev);
    if (!ev.declined.empty()) continue;
    id.exact_math_ulp = std::max(id.exact_math_ulp, ev.exact_math_ulp);
    for (const Evaluation::PolicyFit& fit : ev.policy_fits)
      for (PolicyVerdict& v : id.policies)
        if (to_text(v.policy) == fit.spec) {
          v.outside += fit.outside;
          // NaN: a backward policy, which has no result of its own (evaluate.h, PolicyFit)
          v.exact_math_ulp = std::isnan(fit.exact_math_ulp) ? fit.exact_math_ulp
                                                            : std::max(v.exact_math_ulp, fit.exact_math_ulp);
        }
  }
  return id;
}

}  // namespace normcheck::fuzz
