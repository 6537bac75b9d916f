// The order in which the Welford kernels (layernorm_fwd.welford and
// layernorm_fwd.pytorch_form) combine a row: Welford's update within blocks of
// kWelfordBlock elements, then the blocks' (n, mean, M2) merged with Chan's
// formula in a binary-counter cascade (a new block merges with the partial
// result of the same size, like PyTorch's RowwiseMoments; what is left over
// at the end is merged smallest first). The kernels walk it with float
// moments, the bounds walk the same tree with error bounds in their place.
#pragma once

#include <algorithm>
#include <cstdint>

namespace normcheck::scalar {

inline constexpr int64_t kWelfordBlock = 16;

// block(begin, end) -> Partial for one block; merge(earlier, later) -> Partial.
template <class Partial, class Block, class Merge>
Partial welford_cascade(int64_t d, Block&& block, Merge&& merge) {
  Partial level[64];  // level[k]: the partial of 2^k consecutive blocks
  bool occupied[64] = {};
  for (int64_t begin = 0; begin < d; begin += kWelfordBlock) {
    Partial carry = block(begin, std::min(d, begin + kWelfordBlock));
    int k = 0;
    for (; occupied[k]; ++k) {
      carry = merge(level[k], carry);
      occupied[k] = false;
    }
    level[k] = carry;
    occupied[k] = true;
  }
  int k = 0;
  while (!occupied[k]) ++k;
  Partial total = level[k];
  for (++k; k < 64; ++k)
    if (occupied[k]) total = merge(level[k], total);
  return total;
}

// Float moments of a block or of a merged run of blocks.
struct FloatMoments {
  float n = 0, mean = 0, m2 = 0;
};

// Welford's update over x[begin, end): mean += (x - mean) / n, M2 += (x - mean_old)(x - mean).
inline FloatMoments welford_block(const float* x, int64_t begin, int64_t end) {
  FloatMoments m{1.0f, x[begin], 0.0f};
  for (int64_t i = begin + 1; i < end; ++i) {
    m.n += 1.0f;
    const float delta = x[i] - m.mean;
    m.mean += delta / m.n;
    m.m2 += delta * (x[i] - m.mean);
  }
  return m;
}

// Chan, Golub and LeVeque's merge: with w = n_b / n,
// mean = mean_a + (mean_b - mean_a) w, M2 = M2_a + M2_b + (mean_b - mean_a)^2 n_a w.
inline FloatMoments chan_merge(const FloatMoments& a, const FloatMoments& b) {
  FloatMoments m;
  m.n = a.n + b.n;
  const float w = b.n / m.n;
  const float delta = b.mean - a.mean;
  m.mean = a.mean + delta * w;
  m.m2 = (a.m2 + b.m2) + (delta * delta) * (a.n * w);
  return m;
}

// The row's moments (mean, M2) in the cascade order.
inline FloatMoments welford_moments(const float* x, int64_t d) {
  return welford_cascade<FloatMoments>(
      d, [x](int64_t begin, int64_t end) { return welford_block(x, begin, end); }, chan_merge);
}

}  // namespace normcheck::scalar
