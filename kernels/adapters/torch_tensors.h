// What the two libtorch adapters share: tensors that view the caller's float
// memory without copying it. Included only by kernels/adapters/torch_*.cpp
// (libtorch headers are heavy; nothing else should pull them in).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>

namespace normcheck::torch_adapter {

// libtorch 1.13's first parallel op sets its thread count to what it takes
// for the number of physical cores, which on this 2-core VM is 1, and does so
// with omp_set_num_threads, so oneDNN (same OpenMP runtime) drops to 1 thread
// on that caller too. Before their first op the adapters set the count OpenMP
// itself would use (OMP_NUM_THREADS if set, else one per core), once: libtorch
// runs as oneDNN does, and oneDNN keeps its threads.
inline void use_openmp_default_threads() {
  static const bool done = [] {
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* env = std::getenv("OMP_NUM_THREADS"); env && std::atoi(env) > 0)
      threads = std::atoi(env);
    at::set_num_threads(threads);
    return true;
  }();
  (void)done;
}

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
