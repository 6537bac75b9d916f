// What the two oneDNN adapters share: one CPU engine for the process, one
// stream per calling thread (oneDNN streams are not meant to be shared between
// threads that execute at the same time), and a small per-thread cache of
// primitives so a repeated shape does not pay for primitive creation again.
// Included only by kernels/adapters/onednn_*.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace normcheck::onednn {

inline dnnl::engine& engine() {
  static dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

inline dnnl::stream& stream() {
  thread_local dnnl::stream per_thread(engine());
  return per_thread;
}

// The rows x cols row-major matrix and the per-row statistics vector.
inline dnnl::memory::desc matrix_desc(int64_t rows, int64_t cols) {
  return {{rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab};
}
inline dnnl::memory::desc vector_desc(int64_t n) {
  return {{n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a};
}

// A memory object of this layout without storage of its own: a cached
// primitive's memory objects are pointed at the caller's buffers per call.
inline dnnl::memory unbound_memory(const dnnl::memory::desc& desc) {
  return dnnl::memory(desc, engine(), DNNL_MEMORY_NONE);
}

// The arguments of one primitive execution.
using Args = std::unordered_map<int, dnnl::memory>;

// Points `memory` at `data` and passes it as argument `arg`. oneDNN takes a
// non-const handle for inputs too; it does not write them.
inline void bind_argument(Args& args, int arg, dnnl::memory& memory, const float* data) {
  memory.set_data_handle(const_cast<float*>(data));
  args.emplace(arg, memory);
}

// A key describing one primitive configuration; equal keys reuse the primitive.
struct PrimitiveKey {
  int64_t rows = 0, cols = 0;
  float eps = 0;
  unsigned flags = 0;
  int prop = 0;
  bool operator==(const PrimitiveKey& other) const {
    // eps compared by bits so that a NaN eps still finds its entry.
    return rows == other.rows && cols == other.cols && flags == other.flags &&
           prop == other.prop && std::memcmp(&eps, &other.eps, sizeof eps) == 0;
  }
};

// The last few primitives this thread created, most recent last. Benchmarks
// and tests cycle through a handful of shapes, so a short list suffices.
template <class Primitive>
class PrimitiveCache {
 public:
  template <class Create>
  Primitive& get(const PrimitiveKey& key, Create&& create) {
    for (auto& [k, p] : entries_)
      if (k == key) return p;
    if (entries_.size() == kCapacity) entries_.erase(entries_.begin());
    entries_.emplace_back(key, create());
    return entries_.back().second;
  }

 private:
  static constexpr std::size_t kCapacity = 16;
  std::vector<std::pair<PrimitiveKey, Primitive>> entries_;
};

// Per-thread scratch of at least n floats, for outputs oneDNN insists on
// writing (statistics, diff_scale/diff_shift) that the caller did not ask for.
inline float* scratch(std::vector<float>& buffer, int64_t n) {
  if (buffer.size() < static_cast<std::size_t>(n)) buffer.resize(static_cast<std::size_t>(n));
  return buffer.data();
}

// n copies of `value` in a per-thread buffer oneDNN only reads: ones stand in
// for gamma when the caller gave none but wants dgamma (oneDNN computes
// diff_scale only when given a scale); zeros for the shift argument that
// oneDNN 2.6's backward insists on receiving whenever use_shift is set,
// although the gradient does not depend on it.
inline const float* constant(std::vector<float>& buffer, int64_t n, float value) {
  if (buffer.size() < static_cast<std::size_t>(n)) buffer.resize(static_cast<std::size_t>(n), value);
  return buffer.data();
}
inline const float* ones(int64_t n) {
  thread_local std::vector<float> buffer;
  return constant(buffer, n, 1.0f);
}
inline const float* zeros(int64_t n) {
  thread_local std::vector<float> buffer;
  return constant(buffer, n, 0.0f);
}

// Why oneDNN cannot build the primitive `create` asks for (empty: it can).
template <class Create>
std::string creation_failure(Create&& create) {
  try {
    create();
    return {};
  } catch (const dnnl::error& e) {
    return std::string("oneDNN cannot create the primitive: ") + e.what();
  }
}

}  // namespace normcheck::onednn
