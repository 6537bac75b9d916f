// Long rows: every kernel of ours is judged (within_bound, evaluate() against
// the exact reference) on rows of more than 65536 columns, the generators'
// long rows (GenOptions::long_d, always_long) inside each kernel's declared d
// range. A few rows per kernel (kCases problems of one or two rows) keep CI
// short; the fuzz campaign draws such rows one case in 101 (fuzz/case_gen.h).
// The negative control is a kernel that sums only the first 65536 elements
// of a row: right on every shorter row, caught here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/spec_reference.h"
#include "property_table.h"
#include "runner.h"

namespace normcheck::props {
namespace {

constexpr int kCases = 3;
// d in (65536, 2^17 - 1]: past 2^16 elements, where a 16-bit count or index
// wraps, and no longer than a forward spec's reference takes.
constexpr int64_t kLongD = kSpecReferenceMaxCols;

GenOptions long_options(const Kernel& kernel) {
  GenOptions opts = kWithinBound.options(kernel);
  opts.long_d = kLongD;
  opts.always_long = true;
  return opts;
}

// within_bound on long rows; a kernel whose declared d range reaches past
// 65536 must be given such rows (the generator's promise, checked here too).
Outcome judged_on_long_rows(const Kernel& kernel) {
  RunParams params = default_run_params();
  params.max_success = kCases;
  return check_property(std::string(kernel.name) + "/within_bound_long_rows", gen_problem(long_options(kernel)),
                        [&](const Problem& p) {
                          if (kernel.range.max_d > 65536) RC_ASSERT(p.cols > 65536);
                          kWithinBound.body(kernel, p);
                        },
                        params);
}

std::vector<const Kernel*> ours() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernel_table())
    if (k.origin == Origin::ours && !is_norm_linear(k.op)) out.push_back(&k);
  return out;
}

class LongRows : public testing::TestWithParam<const Kernel*> {};

TEST_P(LongRows, OurKernelIsWithinItsBound) {
  const Kernel& kernel = *GetParam();
  const Outcome outcome = judged_on_long_rows(kernel);
  const std::string text = describe_outcome(kernel, "within_bound_long_rows", outcome);
  EXPECT_FALSE(outcome.failed) << text;
  EXPECT_FALSE(outcome.gave_up) << text;
}

INSTANTIATE_TEST_SUITE_P(Kernels, LongRows, testing::ValuesIn(ours()),
                         [](const testing::TestParamInfo<const Kernel*>& info) {
                           std::string name(info.param->name);
                           for (char& c : name)
                             if (c == '.') c = '_';
                           return name;
                         });

// A two-pass LayerNorm forward that takes its mean and variance over the
// first 65536 elements of a row only (a count kept in 16 bits): exact
// statistics of the wrong elements, so every row longer than that whose tail
// differs from its head is off by far more than any bound.
void first_65536(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                 int64_t rows, int64_t cols, float eps) {
  const int64_t n = std::min<int64_t>(cols, 65536);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    double sum = 0, squares = 0;
    for (int64_t j = 0; j < n; ++j) sum += row[j];
    const double mu = sum / static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) squares += (row[j] - mu) * (row[j] - mu);
    const double rs = 1 / std::sqrt(squares / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = static_cast<float>((row[j] - mu) * rs * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f));
    if (mean) mean[r] = static_cast<float>(mu);
    if (rstd) rstd[r] = static_cast<float>(rs);
  }
}

TEST(LongRowsControl, AKernelThatStopsAt65536IsCaught) {
  const Kernel k{.name = "control.first_65536",
                 .op = Op::layernorm_fwd,
                 .origin = Origin::control,
                 .dtype = DType::f32,
                 .algorithm = "statistics of the first 65536 elements (a negative control)",
                 .fn = first_65536,
                 .bound = default_bound(Op::layernorm_fwd),
                 .range = find_kernel("layernorm_fwd.twopass")->range};
  RunParams params = default_run_params();
  params.max_success = 20;
  params.shrink = false;  // each shrink step costs a long row's reference
  const Outcome outcome = check_property("control.first_65536/within_bound_long_rows",
                                         gen_problem(long_options(k)),
                                         [&](const Problem& p) { kWithinBound.body(k, p); }, params);
  EXPECT_TRUE(outcome.failed) << describe_outcome(k, "within_bound_long_rows", outcome);
}

}  // namespace
}  // namespace normcheck::props
