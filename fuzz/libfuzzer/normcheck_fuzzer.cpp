// A libFuzzer entry point (clang -fsanitize=fuzzer): bytes become a problem,
// every kernel of the table for its op (ours, or a plugin's when
// NORMCHECK_FUZZ_PLUGIN names a library) runs through evaluate() against the
// exact reference (a version-2 kernel against its own spec, on the problem
// with the residual its spec adds and the row stride it takes), and a kernel
// that breaks its bound or misbehaves aborts,
// which libFuzzer reports and saves as a crash input. Built by
// scripts/oss_fuzz_build.sh with OSS-Fuzz's conventions. The plugin is loaded
// into this process (load_plugin_in_process), not a kernel host as normcheck's
// commands do it: libFuzzer's coverage must see the plugin's code, and this
// process exists to run it (a crash of the plugin is the fuzzer's finding).
//
// Byte layout (missing bytes read as 0; the floats' bytes repeat cyclically):
//   [0]    bits 0-1 op (layernorm_fwd, layernorm_bwd, rmsnorm_fwd, rmsnorm_bwd:
//          a version-2 kernel's op is its spec's norm and direction),
//          bit 2 gamma, bit 3 beta, bits 4-6 eps (0, 1e-12, 1e-6, 1e-5, 1e-2, ...)
//   [1]    bits 0-1 rows - 1, bits 2-5 misalignment in floats, bits 6-7 the
//          row stride of a kernel that takes one (Kernel::takes_row_stride,
//          a version-2 kernel): cols + 0 (contiguous, row_stride 0), + 1, + 3, + 17
//   [2..3] cols - 1 (little-endian, mod 512)
//   [4..]  float bits: x, then dy (backward), then gamma, then beta, then the
//          residual (a kernel whose spec has `add`; rows x cols)
// The problems stay where the kernels promise something, as the property
// suite's generators do (properties/problem_gen.cpp): x is any float (a kernel
// declines what lies outside its declared range), while gamma, beta, the
// residual and finite dy are brought within 2^16 in magnitude (a finite value
// beyond keeps its mantissa and sign, its exponent taken mod 17) and gamma,
// beta, the residual finite (1, 1, 0): the bounds are derived for products
// gamma dy xhat that cannot overflow, and the residual stays of x's scale.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"
#include "normcheck/op_spec.h"
#include "normcheck/row_file.h"
#include "plugin_loader.h"

namespace {

using normcheck::Op;
using normcheck::Problem;

constexpr float kEps[] = {0.0f, 1e-12f, 1e-6f, 1e-5f, 1e-2f, 1e-5f, 1e-5f, 1e-5f};
constexpr Op kOps[] = {Op::layernorm_fwd, Op::layernorm_bwd, Op::rmsnorm_fwd, Op::rmsnorm_bwd};
constexpr int64_t kStrideExtra[] = {0, 1, 3, 17};

bool g_plugins = false;

// |v| <= 2^16 for a finite v (non-finite values: `nonfinite_to` if finite, else kept).
float tame(float v, float nonfinite_to) {
  if (!std::isfinite(v)) return std::isfinite(nonfinite_to) ? nonfinite_to : v;
  int e = 0;
  const float m = std::frexp(v, &e);  // v = m 2^e, |m| in [0.5, 1)
  return e <= 16 ? v : std::ldexp(m, e % 17);
}

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte(size_t i) const { return i < size_ ? data_[i] : 0; }
  // The float at float index i of the payload (bytes 4.. repeated cyclically).
  float value(size_t i) const {
    if (size_ <= 4) return 0.0f;
    uint32_t bits = 0;
    for (size_t b = 0; b < 4; ++b) bits |= uint32_t{data_[4 + (4 * i + b) % (size_ - 4)]} << (8 * b);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* paths = std::getenv("NORMCHECK_FUZZ_PLUGIN"); paths && *paths) {
    try {
      normcheck::add_kernel_rows(normcheck::fuzz::load_plugin_in_process(paths));
      g_plugins = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "normcheck_fuzzer: %s\n", e.what());
      std::exit(2);
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteReader in(data, size);
  const Op op = kOps[in.byte(0) & 3];
  const bool backward = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
  Problem p;
  p.rows = 1 + (in.byte(1) & 3);
  p.cols = 1 + ((in.byte(2) | (in.byte(3) << 8)) % 512);
  p.eps = kEps[(in.byte(0) >> 4) & 7];
  p.misalign_floats = (in.byte(1) >> 2) & 15;
  const auto n = static_cast<size_t>(p.rows * p.cols);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) p.x.push_back(in.value(next++));
  if (backward)
    for (size_t i = 0; i < n; ++i) p.dy.push_back(tame(in.value(next++), NAN));
  if (in.byte(0) & 4)
    for (int64_t c = 0; c < p.cols; ++c) p.gamma.push_back(tame(in.value(next++), 1.0f));
  if ((in.byte(0) & 8) && op == Op::layernorm_fwd)
    for (int64_t c = 0; c < p.cols; ++c) p.beta.push_back(tame(in.value(next++), 1.0f));
  std::vector<float> residual;
  for (size_t i = 0; i < n; ++i) residual.push_back(tame(in.value(next++), 0.0f));
  const int64_t stride_extra = kStrideExtra[in.byte(1) >> 6];

  for (const normcheck::Kernel& k : normcheck::kernel_table()) {
    if (k.op != op) continue;
    if (g_plugins ? k.origin != normcheck::Origin::plugin : k.origin != normcheck::Origin::ours) continue;
    // The problem as this kernel's spec has it: gamma and beta only where
    // the spec has them, the residual where it adds one, the row stride where it takes one.
    const normcheck::OpSpec spec = normcheck::spec_of(k);
    Problem q = p;
    if (!spec.has(normcheck::TensorName::gamma)) q.gamma.clear();
    if (!spec.has(normcheck::TensorName::beta)) q.beta.clear();
    if (spec.add) q.residual = residual;
    if (k.takes_row_stride && stride_extra) q.row_stride = q.cols + stride_extra;
    const normcheck::Evaluation ev = normcheck::evaluate(k, q);
    if (!ev.declined.empty() || ev.pass) continue;
    // The finding, as a problem file for `normcheck check --input`, then abort.
    std::fprintf(stderr, "normcheck_fuzzer: %.*s fails: %s[row %lld, col %lld] = %a, exact %a, allowed %.3g%s%s%s\n%s",
                 static_cast<int>(k.name.size()), k.name.data(), ev.worst.output.c_str(),
                 static_cast<long long>(ev.worst.row), static_cast<long long>(ev.worst.col),
                 static_cast<double>(ev.worst.computed), ev.worst.exact, ev.worst.allowed,
                 ev.out_of_bounds_write ? " out_of_bounds" : "", ev.unwritten_output ? " unwritten_output" : "",
                 ev.wrote_input ? " writes_input" : "",
                 normcheck::problem_file_text(op, k.dtype, q, {"normcheck_fuzzer finding"}, k.name, k.spec).c_str());
    std::abort();
  }
  return 0;
}
