// Uses the installed reference and metric: seed 001's first row normalizes to
// -1.4638 ... 1.4638, and a float computed naively is a few ULP from it.
#include <cmath>
#include <cstdio>
#include <vector>

#include <normcheck/metrics.h>
#include <normcheck/reference.h>

int main() {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const auto ref = normcheck::reference_layernorm_fwd(x, {}, {}, 1, 6, 1e-5f);
  // (1 - 3.5) / sqrt(35/12 + 1e-5) = -1.46385...; the seed prints -1.4638.
  if (std::fabs(ref.y.exact[0] - (-1.46385)) > 1e-5) {
    std::printf("unexpected reference y[0] = %.9g\n", ref.y.exact[0]);
    return 1;
  }
  const double ulp = normcheck::ulp_error(ref.y.rounded[0], ref.y.exact[0]);
  if (!(ulp <= 0.5)) {  // the correctly rounded float is within half an ULP
    std::printf("rounded value is %g ULP away\n", ulp);
    return 1;
  }
  std::printf("consumer ok: y[0] = %.9g\n", ref.y.exact[0]);
  return 0;
}
