#include "workload.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "normcheck/op_spec.h"

namespace normcheck::bench {
namespace {

constexpr float kEps = 1e-5f;

// splitmix64: a fixed, fast stream of bits; the benchmark needs plausible
// values, not statistical quality.
struct Bits {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

uint16_t to_bf16_bits(float value) {  // round to nearest even (inputs are finite)
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
float from_bf16_bits(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }
uint16_t to_f16_bits(float value) { return std::bit_cast<uint16_t>(static_cast<_Float16>(value)); }

// Magnitudes in [0.25, 2) with a random sign: no zeros or subnormals, which
// could send some kernels down slow paths, and exact in bf16 and f16.
AlignedVector<float> fill(std::size_t n, uint64_t seed) {
  Bits bits{seed};
  AlignedVector<float> v(n);
  for (auto& value : v) {
    const uint64_t b = bits.next();
    const float magnitude = 0.25f + 1.75f * static_cast<float>(b >> 40) * 0x1p-24f;
    value = from_bf16_bits(to_bf16_bits((b & 1) ? -magnitude : magnitude));
  }
  return v;
}

}  // namespace

std::string_view op_family(Op op) {
  if (is_norm_linear(op)) return op == Op::layernorm_linear_fwd ? "layernorm_linear" : "rmsnorm_linear";
  return (op == Op::layernorm_fwd || op == Op::layernorm_bwd) ? "layernorm" : "rmsnorm";
}

bool is_backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }

std::string_view direction(Op op) { return is_backward(op) ? "bwd" : "fwd"; }

double bytes_moved(const Kernel& kernel, BenchShape shape) {
  const double element_bytes = kernel.dtype == DType::f32 ? 4.0 : 2.0;
  if (const auto& q = spec_of(kernel).quant) {
    const double scales = q->dynamic() ? 4.0 * static_cast<double>(shape.rows * scales_per_row(*q, shape.cols)) : 4.0;
    return (element_bytes + 1.0) * static_cast<double>(shape.rows) * static_cast<double>(shape.cols) + scales;
  }
  const double arrays = spec_of(kernel).add ? 4.0 : is_backward(kernel.op) ? 3.0 : 2.0;
  return arrays * element_bytes * static_cast<double>(shape.rows) * static_cast<double>(shape.cols);
}

Workload::Workload(BenchShape shape, bool affine_forward)
    : shape_(shape), affine_forward_(affine_forward) {
  const auto n = static_cast<std::size_t>(shape.rows * shape.cols);
  const auto rows = static_cast<std::size_t>(shape.rows);
  const auto cols = static_cast<std::size_t>(shape.cols);
  x_ = fill(n, 1);
  dy_ = fill(n, 2);
  gamma_ = fill(cols, 3);
  beta_ = fill(cols, 4);
  out_.assign(n, 0.0f);
  sum_.assign(n, 0.0f);
  dgamma_.assign(cols, 0.0f);
  dbeta_.assign(cols, 0.0f);
  // The saved statistics the backward kernels read: the forward's, from x.
  mean_.resize(rows);
  rstd_.resize(rows);
  rrms_.resize(rows);
  out_mean_.assign(rows, 0.0f);
  out_rstd_.assign(rows, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x_.data() + r * cols;
    double sum = 0, sum_sq = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += row[c], sum_sq += double{row[c]} * row[c];
    const double mean = sum / static_cast<double>(cols);
    double centered = 0;
    for (std::size_t c = 0; c < cols; ++c) centered += (row[c] - mean) * (row[c] - mean);
    mean_[r] = static_cast<float>(mean);
    rstd_[r] = static_cast<float>(1 / std::sqrt(centered / static_cast<double>(cols) + kEps));
    rrms_[r] = static_cast<float>(1 / std::sqrt(sum_sq / static_cast<double>(cols) + kEps));
  }
}

Workload::Inputs16& Workload::inputs16(DType dtype) {
  Inputs16& inputs = dtype == DType::bf16 ? bf16_ : f16_;
  if (inputs.x.empty()) {
    const auto convert = dtype == DType::bf16 ? to_bf16_bits : to_f16_bits;
    inputs.x.resize(x_.size());
    inputs.dy.resize(dy_.size());
    for (std::size_t i = 0; i < x_.size(); ++i) inputs.x[i] = convert(x_[i]), inputs.dy[i] = convert(dy_[i]);
    out16_.assign(x_.size(), 0);
    sum16_.assign(x_.size(), 0);
  }
  return inputs;
}

Shape Workload::problem_shape(const Kernel& kernel) const {
  const bool affine = is_backward(kernel.op) || affine_forward_;
  const bool has_beta = kernel.op != Op::rmsnorm_fwd && kernel.op != Op::rmsnorm_linear_fwd;
  return {shape_.rows, shape_.cols, affine, affine && has_beta,
          is_norm_linear(kernel.op) ? kOutFeatures : 0};
}

std::optional<BenchShape> parse_shape(std::string_view text) {
  const std::string copy(text);  // sscanf wants a terminated string
  long long rows = 0, cols = 0;
  char x = 0, extra = 0;
  if (std::sscanf(copy.c_str(), "%lld%c%lld%c", &rows, &x, &cols, &extra) != 3 || x != 'x' ||
      rows <= 0 || cols <= 0)
    return std::nullopt;
  return BenchShape{rows, cols};
}

KernelArgs Workload::args(const Kernel& kernel) {
  KernelArgs args{.rows = shape_.rows, .cols = shape_.cols, .eps = kEps};
  args.gamma = (is_backward(kernel.op) || affine_forward_) ? gamma_.data() : nullptr;
  args.beta = affine_forward_ ? beta_.data() : nullptr;
  if (kernel.dtype == DType::f32) {
    args.x = x_.data(), args.dy = dy_.data(), args.out = out_.data(), args.residual_out = sum_.data();
  } else {
    const Inputs16& in = inputs16(kernel.dtype);  // first: it sizes out16_ and sum16_
    args.x = in.x.data(), args.dy = in.dy.data(), args.out = out16_.data(), args.residual_out = sum16_.data();
  }
  args.residual = args.dy;  // read by a forward whose spec adds a residual, ignored by the others
  args.mean = out_mean_.data();
  args.stat = out_rstd_.data();
  args.saved_mean = mean_.data();
  args.saved_stat = kernel.op == Op::rmsnorm_bwd ? rrms_.data() : rstd_.data();
  args.dgamma = dgamma_.data();
  args.dbeta = dbeta_.data();
  if (const auto& q = spec_of(kernel).quant) {  // y's codes go into out (one byte each)
    if (q->dynamic()) token_scales_.resize(static_cast<std::size_t>(shape_.rows * scales_per_row(*q, shape_.cols)));
    args.scale = q->dynamic() ? static_cast<void*>(token_scales_.data()) : static_cast<void*>(&static_scale_);
    args.scale_inv = &scale_inv_;  // passed to a kernel whose spec has it (invoke.h)
    args.amax = &amax_;
  }
  if (is_norm_linear(kernel.op)) linear_.fill(args);  // W, b and z in place of y
  return args;
}

void Workload::run(const Kernel& kernel) { invoke(kernel, args(kernel)); }

}  // namespace normcheck::bench
