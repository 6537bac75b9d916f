#include <vector>

#include "broken_kernels.h"

namespace normcheck::broken {

std::span<const Kernel> broken_kernels() {
  static const std::vector<Kernel> kernels = {
      unbiased_variance_kernel(), std_plus_eps_kernel(), mean_skips_tail_kernel(),
      no_projection_backward_kernel(), rmsnorm_eps_outside_kernel(), overpromises_one_ulp_kernel(),
      nan_to_num_kernel(),
  };
  return kernels;
}

}  // namespace normcheck::broken
