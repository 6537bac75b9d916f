#include "simd/fused_add_norm.h"

#include "normcheck/bounds.h"

namespace normcheck::simd {

const float* weight_of(const nc_call& c, Weight weight, std::vector<float>& buffer) {
  const auto* gamma = static_cast<const float*>(c.gamma.data);
  if (!gamma || weight != Weight::one_plus_gamma) return gamma;
  buffer.resize(static_cast<std::size_t>(c.cols));
  for (std::size_t j = 0; j < buffer.size(); ++j) buffer[j] = 1.0f + gamma[j];
  return buffer.data();
}

Bound with_rounded_weight(Bound b) {
  constexpr double u = kUnitRoundoff, grow = 1 + u;
  b.xhat_abs *= grow;
  b.xhat_rel *= grow;
  b.affine_rel = b.affine_rel * grow + u;
  return b;
}

}  // namespace normcheck::simd
