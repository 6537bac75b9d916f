// Index overflow (label nightly): our Highway bf16 kernels on problems of more
// than 2^31 elements, where an element offset held in 32 bits (signed or not
// past 2^32) would wrap. Each problem is rows x cols bf16, 4 GiB an array:
// x (dy aliases it in the backward: both are read only) and the output, 8 GiB
// together, with every thread of the pool. Sampled rows, the first, the last
// one whose elements all lie below 2^31, the first past it and the last, are
// then judged in the big call's own outputs: each element within the
// allowance evaluate() computes for it against the exact reference (the
// evaluate path on the sub-problem of those rows, EvaluateOptions::
// keep_main_elements), and bit for bit the kernel's own result on the
// sub-problem (batch invariance, test_batch_invariance). Negative control:
// the same judgement on the outputs a 31-bit offset would leave (the rows
// past 2^31 elements holding the rows 2^31 elements before them).
//
// Shapes: 524289 x 4096 (many rows over the pool's row blocks) and
// 32769 x 65536 (long rows split into chunks); each is 2^31 + cols elements.
// The rows are fixed (no seed): x[r][j] = a bf16 of N(0,1)-like values
// rotated by r + r / cols, so the sampled rows differ from one another and
// from the rows 2^31 elements before them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/invoke.h"
#include "simd_test_support.h"

namespace normcheck {
namespace {

constexpr int64_t kTwoTo31 = int64_t{1} << 31;

struct BigShape {
  int64_t rows, cols;
};
constexpr BigShape kShapes[] = {{kTwoTo31 / 4096 + 1, 4096}, {kTwoTo31 / 65536 + 1, 65536}};

// An array of n 16-bit elements, not zeroed (the kernel writes every output
// element; x is filled below).
struct Bits16 {
  explicit Bits16(int64_t n) : data(new uint16_t[static_cast<size_t>(n)]) {}
  std::unique_ptr<uint16_t[]> data;
};

std::vector<const Kernel*> bf16_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel* k : test::simd_kernels())
    if (k->dtype == DType::bf16 && !k->spec) out.push_back(k);
  return out;
}

TEST(IndexOverflow, Bf16KernelsPast2To31ElementsMatchTheExactReference) {
  const std::vector<const Kernel*> kernels = bf16_kernels();
  ASSERT_GE(kernels.size(), 4u) << "the LayerNorm and RMSNorm forward and backward bf16 rows";
  for (const BigShape s : kShapes) {
    const int64_t n = s.rows * s.cols;
    ASSERT_GT(n, kTwoTo31);
    // One row's worth of values, rotated by the row: x[r][j] = base[(j + shift(r)) % cols]
    // with shift(r) = r + r / cols: a rotation by r alone repeats every cols rows,
    // and the first row past 2^31 elements is a multiple of cols rows (2^31 / cols)
    // after row 0, whose values it would then repeat.
    std::mt19937_64 rng(2);
    std::normal_distribution<float> normal;
    std::vector<uint16_t> base(static_cast<size_t>(s.cols));
    for (uint16_t& b : base) b = bf16_from_float(3 + normal(rng));
    std::vector<float> gamma(static_cast<size_t>(s.cols)), beta(gamma.size());
    for (size_t j = 0; j < gamma.size(); ++j) gamma[j] = 1 + normal(rng) / 4, beta[j] = normal(rng);

    Bits16 x(n), out(n);
    for (int64_t r = 0; r < s.rows; ++r) {
      uint16_t* row = x.data.get() + r * s.cols;
      const int64_t shift = (r + r / s.cols) % s.cols;
      std::memcpy(row, base.data() + shift, static_cast<size_t>(s.cols - shift) * 2);
      std::memcpy(row + (s.cols - shift), base.data(), static_cast<size_t>(shift) * 2);
    }
    const int64_t past = kTwoTo31 / s.cols;  // the first row whose elements lie at 2^31 and beyond
    const std::vector<int64_t> sampled = {0, past - 1, past, s.rows - 1};

    for (const Kernel* k : kernels) {
      SCOPED_TRACE(std::string(k->name) + " on " + std::to_string(s.rows) + " x " + std::to_string(s.cols));
      const bool backward = k->op == Op::layernorm_bwd || k->op == Op::rmsnorm_bwd;
      // The sub-problem of the sampled rows (dy = x in the backward, as below).
      Problem sub;
      sub.rows = static_cast<int64_t>(sampled.size());
      sub.cols = s.cols;
      sub.eps = 1e-5f;
      for (const int64_t r : sampled)
        for (int64_t j = 0; j < s.cols; ++j) sub.x.push_back(float_from_bf16(x.data[static_cast<size_t>(r * s.cols + j)]));
      if (backward) sub.dy = sub.x;
      sub.gamma = gamma;
      if (k->op == Op::layernorm_fwd) sub.beta = beta;
      const ExactReference reference = exact_reference(*k, sub);
      EvaluateOptions options;
      options.reference = &reference;
      options.keep_main_elements = true;
      const Evaluation ev = evaluate(*k, sub, options);
      ASSERT_TRUE(ev.declined.empty()) << ev.declined;
      EXPECT_TRUE(ev.pass) << "the sampled rows alone";
      ASSERT_EQ(ev.main_elements.size(), sub.x.size());

      // The big call. A backward's saved statistics: the sub-problem's for the
      // sampled rows (what evaluate() passed the kernel), row 0's elsewhere.
      std::vector<float> mean(static_cast<size_t>(s.rows)), stat(mean.size()), dgamma(gamma.size()),
          dbeta(gamma.size());
      if (backward) {
        const std::vector<float>& saved = k->op == Op::layernorm_bwd ? reference.layernorm_fwd.rstd.rounded
                                                                     : reference.rmsnorm_fwd.rrms.rounded;
        std::fill(stat.begin(), stat.end(), saved[0]);
        if (k->op == Op::layernorm_bwd) std::fill(mean.begin(), mean.end(), reference.layernorm_fwd.mean.rounded[0]);
        for (size_t i = 0; i < sampled.size(); ++i) {
          stat[static_cast<size_t>(sampled[i])] = saved[i];
          if (k->op == Op::layernorm_bwd) mean[static_cast<size_t>(sampled[i])] = reference.layernorm_fwd.mean.rounded[i];
        }
      }
      KernelArgs a{.rows = s.rows, .cols = s.cols, .eps = sub.eps};
      a.x = x.data.get();
      a.dy = backward ? x.data.get() : nullptr;
      a.gamma = gamma.data();
      a.beta = k->op == Op::layernorm_fwd ? beta.data() : nullptr;
      a.saved_mean = backward ? mean.data() : nullptr;
      a.saved_stat = backward ? stat.data() : nullptr;
      a.out = out.data.get();
      a.mean = backward ? nullptr : mean.data();
      a.stat = backward ? nullptr : stat.data();
      a.dgamma = backward ? dgamma.data() : nullptr;
      a.dbeta = k->op == Op::layernorm_bwd ? dbeta.data() : nullptr;
      invoke(*k, a);

      // The sampled rows of `out` against the sub-problem: elements outside
      // their allowance, and elements whose bits differ from the kernel's on
      // the sub-problem (the first three of each reported when `report`).
      const auto judge = [&](bool report) {
        int64_t outside = 0, other_bits = 0;
        for (size_t i = 0; i < sampled.size(); ++i) {
          for (int64_t j = 0; j < s.cols; ++j) {
            const float big = float_from_bf16(out.data[static_cast<size_t>(sampled[i] * s.cols + j)]);
            const MainElement& e = ev.main_elements[i * static_cast<size_t>(s.cols) + static_cast<size_t>(j)];
            if (!(std::fabs(static_cast<double>(big) - e.exact) <= e.allowed) && outside++ < 3 && report)
              ADD_FAILURE() << "row " << sampled[i] << ", col " << j << ": " << big << ", exact " << e.exact
                            << ", allowed " << e.allowed;
            if (std::memcmp(&big, &e.computed, sizeof big) != 0 && other_bits++ < 3 && report)
              ADD_FAILURE() << "row " << sampled[i] << ", col " << j << ": " << big << " in the big call, "
                            << e.computed << " in the sub-problem";
          }
        }
        return std::pair{outside, other_bits};
      };
      const auto [outside, other_bits] = judge(true);
      EXPECT_EQ(outside, 0) << "elements of the sampled rows outside their allowance";
      EXPECT_EQ(other_bits, 0) << "elements of the sampled rows whose bits differ from the sub-problem's";

      // Negative control: the outputs a 31-bit element offset would leave, row
      // r >= past written where row r - past belongs (the rows are rotated
      // differently, so each is another row's normalization). The same
      // judgement must see them.
      if (k == kernels.front()) {
        std::memmove(out.data.get() + past * s.cols, out.data.get(),
                     static_cast<size_t>((s.rows - past) * s.cols) * 2);
        const auto [wrapped_outside, wrapped_bits] = judge(false);
        EXPECT_GT(wrapped_outside, 0) << "a wrapped offset's rows not caught";
        EXPECT_GT(wrapped_bits, 0);
      }
    }
  }
}

}  // namespace
}  // namespace normcheck
