// Broken: a correct kernel with a false promise. layernorm_fwd.twopass meets
// its own bound, but a float mean is off by up to d 2^-24 mean|x|, so on a
// row such as [c, c + ulp] with |c| large its y is millions of ULP away from
// the exact +-1: only within_ulp_promise can catch it, which is what this
// control shows.
#include "broken_kernels.h"

namespace normcheck::broken {

Kernel overpromises_one_ulp_kernel() {
  Kernel kernel = *find_kernel("layernorm_fwd.twopass");
  kernel.name = "broken.layernorm_fwd.overpromises_one_ulp";
  kernel.origin = Origin::control;
  kernel.algorithm = "layernorm_fwd.twopass, claiming 1 ULP (wrong)";
  kernel.ulp_promise = 1;
  return kernel;
}

}  // namespace normcheck::broken
