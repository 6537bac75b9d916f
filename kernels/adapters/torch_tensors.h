// What the two libtorch adapters share: tensors that view the caller's float
// memory without copying it. Included only by kernels/adapters/torch_*.cpp
// (libtorch headers are heavy; nothing else should pull them in).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

namespace normcheck::torch_adapter {

// A float tensor of `sizes` over `data` (not owned, not copied). libtorch takes
// a non-const pointer; the adapters never pass an input view to an op that
// writes it.
inline at::Tensor view(const float* data, at::IntArrayRef sizes) {
  return at::from_blob(const_cast<float*>(data), sizes, at::TensorOptions().dtype(at::kFloat));
}

// n copies of `value` in a per-thread buffer the adapters only read.
inline at::Tensor constant(std::vector<float>& buffer, int64_t n, float value) {
  if (buffer.size() != static_cast<std::size_t>(n)) buffer.assign(static_cast<std::size_t>(n), value);
  return view(buffer.data(), {n});
}

}  // namespace normcheck::torch_adapter
