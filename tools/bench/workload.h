// The arrays one benchmark shape needs, shared by every kernel measured on it,
// and how a kernel of the table is called on them. Used by `normcheck bench`
// and by the Google Benchmark binary (bench/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string_view>
#include <vector>

#include "norm_linear_workload.h"
#include "normcheck/invoke.h"
#include "normcheck/kernel.h"

namespace normcheck::bench {

// A std::vector whose data starts on a 64-byte boundary (a cache line, and an
// AVX-512 vector), as framework allocators (PyTorch's CPU allocator, oneDNN's)
// place tensors.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

struct BenchShape {
  int64_t rows = 0, cols = 0;
  bool operator==(const BenchShape&) const = default;
};

// "ROWSxCOLS" with both positive (e.g. "4096x1024"), or nothing.
std::optional<BenchShape> parse_shape(std::string_view text);

// "layernorm" or "rmsnorm", and "fwd" or "bwd": the JSON's op and direction.
std::string_view op_family(Op op);
std::string_view direction(Op op);
bool is_backward(Op op);

// Bytes one call moves as the benchmark counts them: forward reads x and
// writes y (2 arrays), backward reads dy and x and writes dx (3 arrays), a
// forward whose spec adds a residual reads x and residual and writes
// residual_out and y (4 arrays), each rows x cols elements of the kernel's
// dtype (4 bytes for f32, 2 for bf16/f16).
// A forward whose spec quantizes y (quant=) reads x and writes one byte per
// code, plus its scales: the static scale it reads (4 bytes) or the per-token
// scales it writes (4 bytes a row).
// A norm followed by a Linear is counted the same (x and a rows x cols
// output), though it writes rows x 256 and its cost is the matrix product:
// compare its rows with each other, as ratios.
// Parameters (gamma, beta: cols elements, read once per call) and per-row
// statistics are not counted.
double bytes_moved(const Kernel& kernel, BenchShape shape);

// Inputs (x, dy, gamma, beta, saved mean/rstd/rrms; dy is the residual of a
// forward whose spec adds one) and outputs for one shape.
// The values are fixed pseudo-random N(0,1)-like numbers (speed does not depend
// on them); inputs are rounded to bf16 so the 16-bit arrays hold the same
// values (in f16 too, for the magnitudes drawn). Outputs are overwritten by every kernel run on the workload.
class Workload {
 public:
  // affine_forward: give forward kernels gamma and beta. Backward kernels always
  // get gamma and compute dgamma and dbeta (the training backward).
  Workload(BenchShape shape, bool affine_forward);

  BenchShape shape() const { return shape_; }
  // The decline question this workload asks a kernel.
  Shape problem_shape(const Kernel& kernel) const;
  // The arrays of one call of `kernel` on the workload (the 16-bit copies of
  // x and dy are made on the first call for that dtype).
  KernelArgs args(const Kernel& kernel);
  // One call of `kernel` on the workload's arrays: invoke(kernel, args(kernel)).
  void run(const Kernel& kernel);

 private:
  BenchShape shape_;
  bool affine_forward_;
  // The 16-bit copies of x and dy for `dtype`, made on first use.
  struct Inputs16 {
    AlignedVector<uint16_t> x, dy;
  };
  Inputs16& inputs16(DType dtype);

  AlignedVector<float> x_, dy_, gamma_, beta_;
  std::vector<float> mean_, rstd_, rrms_;  // saved statistics, read by backward kernels
  AlignedVector<float> out_, sum_, out_mean_, out_rstd_, dgamma_, dbeta_;  // outputs (sum_: residual_out)
  // A quantized forward's scale: the static one (1/64: the workload's |y|
  // stay below 4, so |t| below 256, inside e4m3's range) or the per-token ones.
  float static_scale_ = 1.0f / 64;
  std::vector<float> token_scales_;
  float scale_inv_ = 0, amax_ = 0;  // scale_apply=multiply's and the word amax's outputs
  Inputs16 bf16_, f16_;
  AlignedVector<uint16_t> out16_, sum16_;
  NormLinearArrays linear_;  // W, b, z of the norm-linear rows
};

}  // namespace normcheck::bench
