#include "input_class.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "normcheck/reference.h"
#include "normcheck/row_scale.h"
#include "row_families.h"

namespace normcheck::fuzz {
namespace {

// Squares that underflow: a row whose largest |x| is below float's smallest
// normal (every x^2 is 0 or subnormal), or whose sigma^2 (mean(x^2) for
// RMSNorm) is, exactly. An all-zero row is neither: it is a constant row.
bool subnormal_scale(const RowFacts& f) {
  return (f.max_abs_x > 0 && f.max_abs_x < FLT_MIN) || (f.scale_square > 0 && f.scale_square < FLT_MIN);
}

bool band(const RowFacts& f, double lo, double hi) {
  return centred(f.op) && f.mean_over_sigma >= lo && f.mean_over_sigma < hi;
}

// Realistic rows: widths of transformer hidden sizes (768: BERT-base/GPT-2,
// 4096: 7B-class models), PyTorch's default eps 1e-5 and the 1e-6 many
// RMSNorm models use, rows of |mean|/sigma = 1 (a residual stream's) unless
// the class is about conditioning.
const std::vector<int64_t> kHidden = {768, 4096};
const std::vector<float> kEps = {1e-5f, 1e-6f};
const std::vector<double> kWellConditioned = {1.0};

// A class's table entry. Each band's rows sit well inside it (the sampled
// |mean|/sigma of 4096 or 768 draws is within a few per cent of the target).
// A backward of 256 rows or more (the campaign's many-rows problems,
// GenOptions::many_rows_one_in): dgamma and dbeta summed over a batch. Its
// realistic rows are batches of N = 4096 and 32768 rows of d = 768 with
// dy ~ N(0.5, 1) (a gradient with a mean, whose column sums grow with N):
// 28M elements (d = 4096 would be 5.3 times that, so it is left out). A
// finding of this class, shrunk and with these rows, costs about 30 s on 2
// shared cores (tests/fuzz/plugins.cmake).
constexpr int64_t kManyRows = 256;
bool backward_op(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }

const InputClass kClasses[] = {
    {"many_rows", "a backward over 256 rows or more",
     [](const RowFacts& f) { return backward_op(f.op) && f.rows >= kManyRows; },
     {{768}, {1e-5f}, kWellConditioned, {1.0}, false, 0, {4096, 32768}, 0.5}},
    {"nonfinite", "non-finite input", [](const RowFacts& f) { return f.nonfinite; },
     {kHidden, kEps, kWellConditioned, {1.0}, true, 0}},
    // gamma 2^15: |y| = 2^15 |xhat| passes f16's 65504 wherever |xhat| > 2.
    {"overflow16", "16-bit overflow", [](const RowFacts& f) { return f.overflow16; },
     {kHidden, kEps, kWellConditioned, {1.0}, false, 0x1p15f}},
    // sigma 2^-64: x normal, sigma^2 about 2^-128; sigma 2^-130: x subnormal.
    {"subnormal_eps0", "subnormal scale, eps = 0",
     [](const RowFacts& f) { return f.eps == 0 && subnormal_scale(f); },
     {kHidden, {0.0f}, kWellConditioned, {0x1p-64, 0x1p-130}, false, 0}},
    {"subnormal", "subnormal scale", [](const RowFacts& f) { return subnormal_scale(f); },
     {kHidden, kEps, kWellConditioned, {0x1p-64, 0x1p-130}, false, 0}},
    {"mean_sigma_ge_1e5", "|mean|/sigma >= 1e5 (constant rows included)",
     [](const RowFacts& f) { return centred(f.op) && f.mean_over_sigma >= 1e5; },
     {kHidden, kEps, {1e6}, {1.0}, false, 0}},
    {"mean_sigma_1e3_1e5", "|mean|/sigma 1e3-1e5", [](const RowFacts& f) { return band(f, 1e3, 1e5); },
     {kHidden, kEps, {2e3, 1e4}, {1.0}, false, 0}},
    {"mean_sigma_10_1e3", "|mean|/sigma 10-1e3", [](const RowFacts& f) { return band(f, 10, 1e3); },
     {kHidden, kEps, {100}, {1.0}, false, 0}},
    {"eps0", "eps = 0", [](const RowFacts& f) { return f.eps == 0; },
     {kHidden, {0.0f}, kWellConditioned, {1.0}, false, 0}},
    // Well-conditioned rows (every RMSNorm row) by width: 8 and 16 (a head's
    // norm), 64 and 128 (head dimensions), the hidden sizes, 5120 and 8192
    // (13B- and 70B-class models).
    {"d_1_16", "d 1-16", [](const RowFacts& f) { return f.d <= 16; }, {{8, 16}, kEps, kWellConditioned, {1.0}, false, 0}},
    {"d_17_256", "d 17-256", [](const RowFacts& f) { return f.d <= 256; },
     {{64, 128}, kEps, kWellConditioned, {1.0}, false, 0}},
    {"d_257_4096", "d 257-4096", [](const RowFacts& f) { return f.d <= 4096; },
     {kHidden, kEps, kWellConditioned, {1.0}, false, 0}},
    {"d_gt_4096", "d > 4096", [](const RowFacts&) { return true; },
     {{5120, 8192}, kEps, kWellConditioned, {1.0}, false, 0}},
};

bool any_nonfinite(std::span<const float> v) {
  for (float e : v)
    if (!std::isfinite(e)) return true;
  return false;
}

std::span<const float> row_of(const std::vector<float>& v, const Problem& p, int64_t r) {
  if (v.empty()) return {};
  return {v.data() + r * p.cols, static_cast<std::size_t>(p.cols)};
}

// The facts of every row, from the norm's input: one reference call for the
// statistics, and for a 16-bit kernel one exact_reference() for its outputs.
std::vector<RowFacts> facts_of_rows(const Kernel& k, const Problem& p) {
  std::vector<RowFacts> facts(static_cast<std::size_t>(p.rows));
  const std::vector<float> x = norm_inputs(k, p);
  const bool params_nonfinite =
      any_nonfinite(p.gamma) || any_nonfinite(p.beta) || any_nonfinite(p.weight) || any_nonfinite(p.bias);

  const std::vector<RowScale> scales = row_scales(k, p);

  std::vector<double> main_exact;
  if (k.dtype != DType::f32) {
    try {
      main_exact = exact_reference(k, p).main_exact();
    } catch (const std::invalid_argument&) {
      // a problem evaluate() refuses: no output to overflow
    }
  }

  for (int64_t r = 0; r < p.rows; ++r) {
    RowFacts& f = facts[static_cast<std::size_t>(r)];
    f.op = k.op;
    f.d = p.cols;
    f.rows = p.rows;
    f.eps = p.eps;
    const auto xr = row_of(x, p, r);
    f.nonfinite = params_nonfinite || any_nonfinite(xr) || any_nonfinite(row_of(p.dy, p, r));
    for (float v : xr) f.max_abs_x = std::max(f.max_abs_x, static_cast<double>(std::fabs(v)));
    const RowScale& s = scales[static_cast<std::size_t>(r)];
    f.scale_square = s.scale_square;
    f.mean_over_sigma = s.mean_over_sigma;
    if (main_exact.size() == static_cast<std::size_t>(p.rows * p.cols))
      for (int64_t c = 0; c < p.cols; ++c)
        f.overflow16 = f.overflow16 || std::fabs(main_exact[static_cast<std::size_t>(r * p.cols + c)]) >
                                           largest_finite(k.dtype);
  }
  return facts;
}

const InputClass& first_fitting(const RowFacts& f) {
  for (const InputClass& c : kClasses)
    if (c.fits(f)) return c;
  return kClasses[std::size(kClasses) - 1];  // unreachable: the last fits every row
}

// "2^-64" for a power of two beyond 2^+-20 (where %g would print digits that
// hide it), else %g.
std::string number_text(double v) {
  int e = 0;
  char text[32];
  if (v > 0 && std::frexp(v, &e) == 0.5 && std::abs(e - 1) >= 20)
    std::snprintf(text, sizeof text, "2^%d", e - 1);
  else
    std::snprintf(text, sizeof text, "%g", v);
  return text;
}

template <typename T>
std::string list_text(const std::vector<T>& values) {
  std::string s;
  for (T v : values) s += (s.empty() ? "" : ", ") + number_text(static_cast<double>(v));
  return s;
}

}  // namespace

std::span<const InputClass> input_classes() { return kClasses; }

const InputClass& input_class(std::string_view id) {
  for (const InputClass& c : kClasses)
    if (c.id == id) return c;
  throw std::invalid_argument("unknown input class '" + std::string(id) + "'");
}

RowFacts row_facts(const Kernel& kernel, const Problem& problem, int64_t row) {
  if (row < 0 || row >= problem.rows) throw std::invalid_argument("row_facts: no such row");
  return facts_of_rows(kernel, problem)[static_cast<std::size_t>(row)];
}

const InputClass& classify(const Kernel& kernel, const Problem& problem, int64_t row) {
  if (problem.rows <= 0) return first_fitting(RowFacts{.op = kernel.op, .d = problem.cols, .eps = problem.eps});
  const std::vector<RowFacts> facts = facts_of_rows(kernel, problem);
  if (row >= 0 && row < problem.rows) return first_fitting(facts[static_cast<std::size_t>(row)]);
  for (const InputClass& c : kClasses)
    for (const RowFacts& f : facts)
      if (c.fits(f)) return c;
  return kClasses[std::size(kClasses) - 1];
}

const InputClass& width_class(int64_t d) {
  for (const InputClass& c : kClasses)
    if (c.id.rfind("d_", 0) == 0 && c.fits(RowFacts{.op = Op::rmsnorm_fwd, .d = d})) return c;
  return kClasses[std::size(kClasses) - 1];
}

bool call_label(const std::string& label) {
  return label != "accuracy" && label != "nan" && label != "policy_mismatch" && label != "quantization";
}

const InputClass& class_of(const Kernel& kernel, const Problem& problem, const CaseResult& result) {
  if (call_label(result.label)) return width_class(problem.cols);
  return classify(kernel, problem, result.evaluation.worst.row);
}

std::vector<SeverityProblem> severity_problems(const InputClass& c, const Kernel& kernel, uint64_t seed) {
  const SeverityPlan& plan = c.severity;
  const auto index = static_cast<uint32_t>(&c - kClasses);
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), index, 0x73657679u};
  props::Rng rng(seq);
  std::normal_distribution<double> normal(0, 1);
  const bool backward = kernel.op == Op::layernorm_bwd || kernel.op == Op::rmsnorm_bwd;
  const bool has_beta = kernel.op == Op::layernorm_fwd || kernel.op == Op::layernorm_linear_fwd;
  // A spec that adds a residual (op_spec.h): the class is the norm's input
  // s = x + residual's, so s is drawn with the plan's mean and sigma, split
  // as x = c + (sqrt(3)/2) sigma N(0,1) and residual = (1/2) sigma N(0,1)
  // (independent normals: their sum is c + sigma N(0,1)).
  const bool residual = spec_of(kernel).add;
  const double x_share = residual ? std::sqrt(0.75) : 1.0;
  std::vector<SeverityProblem> out;
  const std::vector<int64_t> plan_rows = plan.rows.empty() ? std::vector<int64_t>{kSeverityRows} : plan.rows;
  for (int64_t rows : plan_rows)
  for (int64_t d : plan.d)
    if (rows * d <= kSeverityMaxElements)
    for (float eps : plan.eps)
      for (double ratio : plan.mean_over_sigma)
        for (double sigma : plan.sigma) {
          Problem p;
          p.rows = rows;
          p.cols = d;
          p.eps = eps;
          const double max_abs = props::max_abs_x(kernel.range, d);
          for (int64_t r = 0; r < p.rows; ++r) {
            const auto row = props::offset_normal_row(d, ratio * sigma, x_share * sigma, max_abs, rng);
            p.x.insert(p.x.end(), row.begin(), row.end());
            if (backward) {
              const auto dy = props::offset_normal_row(d, plan.dy_mean, 1, max_abs, rng);
              p.dy.insert(p.dy.end(), dy.begin(), dy.end());
            }
            if (residual) {
              const auto res = props::offset_normal_row(d, 0, 0.5 * sigma, max_abs, rng);
              p.residual.insert(p.residual.end(), res.begin(), res.end());
            }
          }
          if (plan.inf_in_first_row) p.x[static_cast<std::size_t>(d / 2)] = std::numeric_limits<float>::infinity();
          p.gamma.resize(static_cast<std::size_t>(d));
          for (float& g : p.gamma) g = plan.gamma != 0 ? plan.gamma : static_cast<float>(1 + 0.25 * normal(rng));
          if (has_beta && plan.gamma == 0) {
            p.beta.resize(static_cast<std::size_t>(d));
            for (float& b : p.beta) b = static_cast<float>(0.25 * normal(rng));
          }
          if (is_norm_linear(kernel.op)) {  // W ~ N(0, 1/d), 4 outputs, no bias
            p.out_features = 4;
            p.weight.resize(static_cast<std::size_t>(p.out_features * d));
            for (float& w : p.weight) w = static_cast<float>(normal(rng) / std::sqrt(static_cast<double>(d)));
          }
          std::string what = (plan.rows.empty() ? "" : "N = " + std::to_string(rows) + ", ") + "d = " + std::to_string(d) + ", eps = " + number_text(eps) +
                             ", |mean|/sigma = " + number_text(ratio);
          if (sigma != 1) what += ", sigma = " + number_text(sigma);
          if (plan.gamma != 0) what += ", gamma = " + number_text(plan.gamma);
          if (plan.inf_in_first_row) what += ", an inf in row 0";
          out.push_back({std::move(p), std::move(what)});
        }
  return out;
}

std::string severity_rows_text(const InputClass& c, const Kernel& kernel) {
  const SeverityPlan& plan = c.severity;
  std::string s = "d = " + list_text(plan.d) + "; eps = " + list_text(plan.eps) +
                  "; |mean|/sigma = " + list_text(plan.mean_over_sigma);
  if (plan.sigma != std::vector<double>{1.0}) s += "; sigma = " + list_text(plan.sigma);
  if (plan.gamma != 0) s += "; gamma = " + number_text(plan.gamma);
  if (plan.inf_in_first_row) s += "; an inf in the first row";
  if (is_norm_linear(kernel.op)) s += "; W 4 x d";
  if (plan.dy_mean != 0) s += "; dy ~ N(" + number_text(plan.dy_mean) + ", 1)";
  if (!plan.rows.empty()) return "N = " + list_text(plan.rows) + " rows of " + s + " (at most " +
                                 std::to_string(kSeverityMaxElements) + " elements)";
  return s + "; " + std::to_string(kSeverityRows) + " rows each";
}

}  // namespace normcheck::fuzz
