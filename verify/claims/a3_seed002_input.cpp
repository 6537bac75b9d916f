// Seed 002's input regenerated: torch.manual_seed(123); torch.randn(2, 3, 4),
// through libtorch when the build has it (the only libtorch use of the claims).
#include "a3_seed002_input.h"

#ifdef NORMCHECK_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace normcheck::claims {

Seed002Input seed002_input() {
#ifdef NORMCHECK_HAVE_TORCH
  torch::manual_seed(123);
  const torch::Tensor embedding = torch::randn({2, 3, 4}).contiguous();
  const float* data = embedding.data_ptr<float>();
  return {std::vector<float>(data, data + embedding.numel()), "libtorch " TORCH_VERSION};
#else
  return {};
#endif
}

}  // namespace normcheck::claims
