// Uses each installed library the way a user's test would: the exact
// reference and a metric (normcheck_verify), evaluate() over a kernel of the
// table (normcheck_kernels) and the adapters it loads from beside it, and the
// claim table (normcheck_claims).
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include <normcheck/claims.h>
#include <normcheck/evaluate.h>
#include <normcheck/kernel.h>
#include <normcheck/metrics.h>
#include <normcheck/reference.h>

namespace {

int fail(const char* what) {
  std::printf("consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const auto ref = normcheck::reference_layernorm_fwd(x, {}, {}, 1, 6, 1e-5f);
  // (1 - 3.5) / sqrt(35/12 + 1e-5) = -1.463850..., computed independently in
  // float64 here: the reference must agree to far below float precision.
  const double expected = (1 - 3.5) / std::sqrt(35.0 / 12.0 + 1e-5f);
  if (std::fabs(ref.y.exact[0] - expected) > 1e-12) return fail("reference y[0] is off");
  // The correctly rounded float is within half an ULP of the exact value.
  if (!(normcheck::ulp_error(ref.y.rounded[0], ref.y.exact[0]) <= 0.5))
    return fail("rounded reference is more than half an ULP away");

  const normcheck::Kernel* twopass = normcheck::find_kernel("layernorm_fwd.twopass");
  if (twopass == nullptr) return fail("layernorm_fwd.twopass is not in the table");
  normcheck::Problem problem;
  problem.rows = 1;
  problem.cols = 6;
  problem.x = x;
  const normcheck::Evaluation e = normcheck::evaluate(*twopass, problem);
  if (!e.pass || !e.declined.empty()) return fail("twopass does not pass a benign row");

  // The adapters' rows load their modules, installed next to
  // libnormcheck_kernels.so, on first use: found there, they run.
  int adapters = 0;
  for (const normcheck::Kernel& k : normcheck::kernel_table()) {
    if (k.origin != normcheck::Origin::third_party || k.op != normcheck::Op::layernorm_fwd) continue;
    const normcheck::Evaluation a = normcheck::evaluate(k, problem);
    if (!a.declined.empty()) {
      std::printf("consumer: %.*s declines: %s\n", static_cast<int>(k.name.size()), k.name.data(),
                  a.declined.c_str());
      return 1;
    }
    if (!a.pass) return fail("an adapter does not pass a benign row");
    ++adapters;
  }

  bool has_s2 = false;
  for (const normcheck::Claim& claim : normcheck::claim_table())
    has_s2 = has_s2 || claim.id == std::string_view("S2");
  if (!has_s2) return fail("claim S2 is not in the claim table");

  std::printf("consumer ok: y[0] = %.9g, twopass error/bound %.3g, %d adapters ran, %zu claims\n",
              ref.y.exact[0], e.max_error_over_bound, adapters, normcheck::claim_table().size());
  return 0;
}
