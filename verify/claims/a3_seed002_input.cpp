// Seed 002's input regenerated: torch.manual_seed(123); torch.randn(2, 3, 4),
// through libtorch when the build has it (the only libtorch use of the claims).
// libtorch is reached through the torch adapter module, loaded here on first
// use, so a claims process that does not check A3 does not load libtorch; where
// the module or libtorch cannot be loaded, the input is empty as in a build
// without libtorch.
#include "a3_seed002_input.h"

#ifdef NORMCHECK_HAVE_TORCH
#include <cstdint>
#include <utility>

#include "adapter_loader.h"
#endif

namespace normcheck::claims {

Seed002Input seed002_input() {
#ifdef NORMCHECK_HAVE_TORCH
  const adapters::AdapterModule* torch = adapters::torch_module().module;
  if (!torch || !torch->seeded_randn) return {};
  constexpr int64_t kSizes[] = {2, 3, 4};
  std::vector<float> values(2 * 3 * 4);
  torch->seeded_randn(123, kSizes, 3, values.data());
  return {std::move(values), torch->library};
#else
  return {};
#endif
}

}  // namespace normcheck::claims
