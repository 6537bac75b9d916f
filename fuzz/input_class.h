// The input classes fuzz findings are grouped by (fuzz/campaign.h): one table
// of named predicates over a row of a problem and the kernel's op and dtype,
// tried in order; a case gets the first class that fits. Each class also says
// which realistic rows belong to it, on which a finding's severity is measured.
//
// The order puts what explains a failure best first: a non-finite input or an
// overflowing 16-bit output decides the outcome whatever else the row is;
// squares that underflow decide it next (with eps = 0 apart, where they leave
// 0/0 or 1/0); then the conditioning |mean|/sigma of a LayerNorm row, where
// cancellation grows the error whatever eps; then eps = 0 on a row of normal
// scale; then, for a well-conditioned row (and every RMSNorm row), its width d.
// The last class fits every row, so every case has a class.
//
// The table classifies the numerical findings (accuracy, nan), which depend on
// the values of the row they are on. A finding about the call (crash, hang,
// out_of_bounds, unwritten_output, writes_input, nondeterministic,
// fp_environment) depends on the shape the kernel's loops and buffers see,
// not on one row's values: it is classified by its d band alone, so one
// shape defect is not reported once per value class.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isolation.h"
#include "normcheck/evaluate.h"
#include "normcheck/kernel.h"

namespace normcheck::fuzz {

// What the predicates read about one row (row_facts computes it), from the
// norm's input as the kernel sees it: x in its format, or for a forward spec
// with `add` s = x + residual, stored where the spec rounds the sum
// (op_spec.h, norm_input).
struct RowFacts {
  Op op{};
  int64_t d = 0;
  int64_t rows = 1;              // of the whole problem (a backward's dgamma and dbeta sum over them)
  float eps = 0;
  bool nonfinite = false;        // a NaN or inf in the row's x, residual, stored sum or dy, or in gamma, beta, W or b
  bool overflow16 = false;       // a 16-bit kernel: the row's exact main output (y or dx) beyond the format's largest finite
  double max_abs_x = 0;          // of the norm's input as the kernel sees it (a 16-bit kernel: rounded to its dtype)
  // sigma^2 (LayerNorm ops) or mean(x^2) (RMSNorm ops): the reference's exact
  // value correctly rounded to double (verify/reference.h).
  double scale_square = 0;
  // |mean|/sigma (row_scale.h, row_scales): from the reference's mean and variance, each correctly
  // rounded to double, so within a few units of 2^-53 of the exact ratio
  // relative (a row that close to a band's edge may fall on either side);
  // +inf on a constant row. LayerNorm ops only (NaN for RMSNorm ops, where
  // the mean is not subtracted and does not condition the result).
  double mean_over_sigma = 0;
};

// The realistic rows of a class, on which a finding's severity is measured
// (severity_problems): the product d x eps x |mean|/sigma, each problem
// kSeverityRows rows of c + sigma N(0,1) with |c| = mean_over_sigma * sigma.
struct SeverityPlan {
  std::vector<int64_t> d;
  std::vector<float> eps;
  std::vector<double> mean_over_sigma;
  std::vector<double> sigma = {1.0};
  bool inf_in_first_row = false;  // x[0][d/2] = +inf: the non-finite class
  float gamma = 0;                // every gamma this value; 0: drawn 1 + 0.25 N(0,1) (beta 0.25 N(0,1))
  // Rows per problem, crossed with d (empty: kSeverityRows), leaving out the
  // shapes of more than kSeverityMaxElements elements.
  std::vector<int64_t> rows = {};
  double dy_mean = 0;             // a backward's dy ~ dy_mean + N(0, 1)
};

// The largest severity problem, rows x d: 2^25 elements (a 64k x 4096
// backward's reference alone takes 51 s, docs/performance.md).
inline constexpr int64_t kSeverityMaxElements = int64_t{1} << 25;

struct InputClass {
  std::string_view id;    // stable: JSON "class", the corpus files' notes
  std::string_view text;  // what the text output and the report print
  bool (*fits)(const RowFacts&);
  SeverityPlan severity;
};

// The table, in the order classify() tries it.
std::span<const InputClass> input_classes();

// The class named `id`; throws std::invalid_argument for an unknown one.
const InputClass& input_class(std::string_view id);

// The facts of row `row` of `problem` as `kernel` sees it.
RowFacts row_facts(const Kernel& kernel, const Problem& problem, int64_t row);

// The table's class of a problem: of row `row` when it is one of the
// problem's, else the first class in table order that any row fits.
const InputClass& classify(const Kernel& kernel, const Problem& problem, int64_t row);

// The d band of a width (the table's last four classes).
const InputClass& width_class(int64_t d);

// Whether a label is about the kernel's call rather than its numbers (all but
// accuracy, nan and policy_mismatch).
bool call_label(const std::string& label);

// The class of a labelled case: a numerical finding's by classify() on the
// row of its worst element (the whole problem when that is a sum over rows,
// dgamma or dbeta); a call finding's by width_class().
const InputClass& class_of(const Kernel& kernel, const Problem& problem, const CaseResult& result);

inline constexpr int64_t kSeverityRows = 4;  // rows per severity problem: the worst is not one draw's

// One realistic problem of a class and what it is ("d = 768, eps = 1e-05, |mean|/sigma = 100").
struct SeverityProblem {
  Problem problem;
  std::string what;
};

// The class's realistic problems for `kernel` (its op: dy for a backward,
// W for a norm followed by a Linear; x within its declared range), drawn from
// `seed` and the class alone, so every kernel of an op meets the same rows.
std::vector<SeverityProblem> severity_problems(const InputClass& c, const Kernel& kernel, uint64_t seed);

// "d = 768, 4096; eps = 1e-05, 1e-06; |mean|/sigma = 100; 4 rows each".
std::string severity_rows_text(const InputClass& c, const Kernel& kernel);

}  // namespace normcheck::fuzz
