// Batch invariance of our threaded kernels: a row's outputs are the same bits
// whatever the thread count and whatever batch the row is in (alone, in a
// batch of another size, at another position). thread_pool.h promises it
// (the partition and merge order are fixed by the shape); this test holds
// every Highway row of the kernel table to it on every Highway target this
// CPU supports, at 1, 2, 3 and 7 threads, with
// every call sent through the pool (EveryCallParallel), on shapes that take
// each threading path of row_driver.h: many rows (row blocks), a few long
// rows (chunks split over the pool), one long row.
//
// The comparison is by row digests (Evaluation::row_digests: the bits of a
// row's own outputs, not dgamma/dbeta) and, for one problem at two thread
// counts, by the digest of every output. Its negative controls are two
// kernels whose mean is summed in partials that follow the thread count or
// the number of rows: the same check reports both. The seed of the random
// rows is printed and taken from NORMCHECK_SEED (test_seed.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "isolation.h"  // fuzz::batch_variance: the row alone, the rows reversed
#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/op_spec.h"
#include "simd/row_partition.h"
#include "simd/thread_pool.h"
#include "simd_test_support.h"
#include "test_seed.h"
#include "thread_guards.h"

namespace normcheck {
namespace {

using test::EveryCallParallel;
using test::ThreadCountGuard;

constexpr int kThreadCounts[] = {2, 3, 7};

EvaluateOptions outputs_only() {
  EvaluateOptions o;
  o.outputs_only = true;
  return o;
}

// Why a row of `p` gives other output bits at another thread count or in
// another batch than with one thread in p itself, or "" when every row keeps
// its bits. At each thread count t of kThreadCounts: p whole (every row, and
// every output's digest, dgamma/dbeta included, against 1 thread), the last
// row alone and the rows reversed (fuzz::batch_variance), and a batch of
// p.rows + 1 rows that puts row 0 last as well as first.
std::string thread_batch_variance(const Kernel& k, const Problem& p) {
  simd::set_thread_count(1);
  const Evaluation one = evaluate(k, p, outputs_only());
  if (!one.declined.empty()) return "declined: " + one.declined;
  for (const int t : kThreadCounts) {
    simd::set_thread_count(t);
    const std::string at = " with " + std::to_string(t) + " threads";
    const Evaluation many = evaluate(k, p, outputs_only());
    if (many.row_digests.size() != one.row_digests.size()) return "no row digests" + at;
    for (std::size_t r = 0; r < one.row_digests.size(); ++r)
      if (many.row_digests[r] != one.row_digests[r])
        return "row " + std::to_string(r) + " gives other output bits" + at + " than with 1";
    if (many.output_digest != one.output_digest) return "the outputs (dgamma/dbeta included) differ" + at;
    if (std::string moved = fuzz::batch_variance(k, p, one, outputs_only()); !moved.empty())
      return moved + at;
    std::vector<int64_t> longer;
    for (int64_t r = 0; r < p.rows; ++r) longer.push_back(r);
    longer.push_back(0);
    const Evaluation grown = evaluate(k, with_rows(p, longer), outputs_only());
    if (grown.row_digests.size() != longer.size()) return "no row digests for the batch of " +
                                                          std::to_string(longer.size()) + at;
    if (grown.row_digests.back() != one.row_digests[0])
      return "row 0 gives other output bits as row " + std::to_string(p.rows) + " of a batch of " +
             std::to_string(longer.size()) + at;
  }
  return {};
}

struct Shape {
  int64_t rows, cols;
};
// Many rows (row blocks over the pool; 37 rows: a backward's two blocks of
// kBwdRowsPerBlock), a few rows long enough to be split into chunks over the
// pool when there are fewer rows than threads, one such row (the last row
// alone then takes the split path at every thread count).
constexpr Shape kShapes[] = {{37, 301}, {3, simd::kSplitMinCols + 5}, {2, simd::kSplitMinCols + 1500}};

// The kernel's problem: random_problem's rows (x = 5 + N(0,1), gamma and
// beta, and a residual ~ N(0,1) when the kernel's spec adds one).
Problem problem_for(const Kernel& k, Shape s, std::mt19937_64& rng) {
  return test::random_problem(k, s.rows, s.cols, 5, true, 1, rng);
}

class BatchInvarianceOnEveryTarget : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(BatchInvarianceOnEveryTarget);

TEST_P(BatchInvarianceOnEveryTarget, EveryThreadedKernelKeepsARowsBitsAcrossThreadCountsAndBatches) {
  ThreadCountGuard guard;
  EveryCallParallel parallel;
  std::mt19937_64 rng(test::test_seed());
  const std::vector<const Kernel*> kernels = test::simd_kernels();
  ASSERT_FALSE(kernels.empty()) << "the table has no Highway rows";
  for (const Shape s : kShapes) {
    for (const Kernel* k : kernels) {
      const Problem p = problem_for(*k, s, rng);
      EXPECT_EQ(thread_batch_variance(*k, p), "") << k->name << " on " << s.rows << " x " << s.cols << ", "
                                                   << target();
    }
  }
}

// ---- Negative controls ----

// A float32 LayerNorm forward whose mean sums each row in `parts` partials
// (parts contiguous slices, each summed left to right, then added): the
// rounding of the sum, hence its bits, follows parts. The variance and y are
// computed from that mean as a two-pass kernel does.
void layernorm_in_parts(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                        float* rstd, int64_t rows, int64_t cols, float eps, int64_t parts) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float sum = 0;
    for (int64_t p = 0; p < parts; ++p) {
      float partial = 0;
      for (int64_t j = cols * p / parts; j < cols * (p + 1) / parts; ++j) partial += row[j];
      sum += partial;
    }
    const float mu = sum / static_cast<float>(cols);
    float squares = 0;
    for (int64_t j = 0; j < cols; ++j) squares += (row[j] - mu) * (row[j] - mu);
    const float rs = 1.0f / std::sqrt(squares / static_cast<float>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) {
      const float g = gamma ? gamma[j] : 1.0f, b = beta ? beta[j] : 0.0f;
      y[r * cols + j] = (row[j] - mu) * rs * g + b;
    }
    if (mean) mean[r] = mu;
    if (rstd) rstd[r] = rs;
  }
}

// One partial per thread of the pool: what a reduction split over the
// threads that happen to be there gives.
void split_by_threads(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                      int64_t rows, int64_t cols, float eps) {
  layernorm_in_parts(x, gamma, beta, y, mean, rstd, rows, cols, eps, simd::thread_count());
}

// Two partials in a batch of rows, one for a row alone: broken.batch_variant's
// defect (examples/plugin/broken/broken.c) in a table row.
void split_by_rows(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                   int64_t rows, int64_t cols, float eps) {
  layernorm_in_parts(x, gamma, beta, y, mean, rstd, rows, cols, eps, rows > 1 ? 2 : 1);
}

Kernel control(std::string_view name, nc_layernorm_fwd_fn fn) {
  return Kernel{.name = name,
                .op = Op::layernorm_fwd,
                .origin = Origin::control,
                .dtype = DType::f32,
                .algorithm = "two-pass, the mean summed in partials (a negative control)",
                .fn = fn,
                .bound = default_bound(Op::layernorm_fwd),
                .family = Family::scalar};
}

// Rows of 2^24 followed by 300 ones: summed left to right each one rounds
// away (2^24 + 1 ties to 2^24), while a second partial keeps them (2^24 + k
// is a float for even k <= 2^24), so every cut into partials gives another
// mean, on every row.
Problem ones_after_2_24(int64_t rows, int64_t cols) {
  Problem p;
  p.rows = rows;
  p.cols = cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) p.x.push_back(j == 0 ? 0x1p24f : 1.0f);
  return p;
}

TEST(BatchInvariance, CatchesASumSplitByTheThreadCount) {
  ThreadCountGuard guard;
  const std::string why = thread_batch_variance(control("control.split_by_threads", split_by_threads),
                                                ones_after_2_24(37, 301));
  EXPECT_NE(why.find("threads than with 1"), std::string::npos) << why;
}

TEST(BatchInvariance, CatchesASumSplitByTheNumberOfRows) {
  ThreadCountGuard guard;
  const std::string why = thread_batch_variance(control("control.split_by_rows", split_by_rows),
                                                ones_after_2_24(37, 301));
  EXPECT_NE(why.find("when it is run alone"), std::string::npos) << why;
}

}  // namespace
}  // namespace normcheck
