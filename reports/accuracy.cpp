// The accuracy workload: rows from the adversarial families, every kernel held
// to its bound by evaluate().
#include "accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "generators.h"  // props::draw_quantized
#include "normcheck/op_spec.h"
#include "normcheck/reference.h"
#include "normcheck/reimplementation.h"
#include "row_families.h"

namespace normcheck::report {
namespace {

bool is_backward(Op op) { return op == Op::layernorm_bwd || op == Op::rmsnorm_bwd; }
bool has_beta(Op op) { return op == Op::layernorm_fwd || op == Op::layernorm_linear_fwd; }
bool is_rms(Op op) { return op == Op::rmsnorm_fwd || op == Op::rmsnorm_bwd || op == Op::rmsnorm_linear_fwd; }

// The Linear after the norm of a norm-linear row: 8 outputs, W ~ N(0, 1/d)
// and b ~ 0.1 N(0, 1), the scale of a trained projection.
constexpr int64_t kLinearOutputs = 8;

// Each (family, d, index) has its own stream, so a row does not depend on
// which kernels ran before it, and kernels with the same input range see the
// same rows (comparable side by side).
props::Rng row_rng(uint64_t seed, int family, int64_t d, int index) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(family), static_cast<uint32_t>(d), static_cast<uint32_t>(index)};
  return props::Rng(seq);
}

// Half the rows with PyTorch's default eps, half with eps = 0 (pure
// normalization, where constant and tiny rows are hardest); affine parameters
// on every other pair.
float eps_of(int index) { return index % 2 == 0 ? 1e-5f : 0.0f; }
bool affine_of(int index) { return (index / 2) % 2 == 1; }

Problem make_problem(const Kernel& k, props::RowFamily family, int64_t d, int index, uint64_t seed) {
  props::Rng rng = row_rng(seed, static_cast<int>(family), d, index);
  Problem p;
  p.rows = 1;
  p.cols = d;
  p.eps = eps_of(index);
  p.x = props::draw_row(family, d, props::max_abs_x(k.range, d), rng);
  std::normal_distribution<double> normal(0.0, 1.0);
  if (affine_of(index)) {
    // gamma around 1 and beta around 0, as trained LayerNorm parameters are.
    for (int64_t j = 0; j < d; ++j) p.gamma.push_back(static_cast<float>(1.0 + 0.25 * normal(rng)));
    if (has_beta(k.op))
      for (int64_t j = 0; j < d; ++j) p.beta.push_back(static_cast<float>(0.25 * normal(rng)));
  }
  if (is_backward(k.op))
    for (int64_t j = 0; j < d; ++j) p.dy.push_back(static_cast<float>(normal(rng)));
  // A spec that adds a residual (the fused rows) gets zeros: the norm's input
  // x + 0 is then x itself, the row of the family whose statistics the
  // report's axes show (fuzz and the tests draw residuals of their own).
  if (spec_of(k).add) p.residual.assign(static_cast<std::size_t>(d), 0.0f);
  // A spec that quantizes y gets the generators' quantization (draw_quantized:
  // a static scale around the row's largest |y| / qmax, rows aimed at code
  // boundaries, the scale's clamps).
  if (spec_of(k).quant) props::draw_quantized(props::kernel_options(k), rng, p);
  if (is_norm_linear(k.op)) {
    p.out_features = kLinearOutputs;
    const double scale = 1 / std::sqrt(static_cast<double>(d));
    for (int64_t k2 = 0; k2 < kLinearOutputs * d; ++k2) p.weight.push_back(static_cast<float>(scale * normal(rng)));
    for (int64_t i = 0; i < kLinearOutputs; ++i) p.bias.push_back(static_cast<float>(0.1 * normal(rng)));
  }
  return p;
}

// The batch of `rows` rows for a backward kernel: draw_batch's x and dy (and
// a residual gradient under `add`), gamma around 1 as make_problem's, eps 1e-5.
// Its stream is a family number past the row families'.
Problem make_batch(const Kernel& k, int64_t rows, int64_t d, uint64_t seed) {
  props::Rng rng = row_rng(seed, props::kRowFamilyCount, d, static_cast<int>(rows));
  Problem p;
  p.rows = rows;
  p.cols = d;
  p.eps = eps_of(0);
  props::draw_batch(rng, props::max_abs_x(k.range, d), spec_of(k).add, p);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t j = 0; j < d; ++j) p.gamma.push_back(static_cast<float>(1.0 + 0.25 * normal(rng)));
  return p;
}

// Batches need x and dy alone: not a backward that reads y (from=y), nor a
// kernel outside whose d range batch_d lies.
bool runs_batches(const Kernel& k, const AccuracyOptions& o) {
  return is_backward(k.op) && !spec_of(k).from_y && k.range.min_d <= o.batch_d && o.batch_d <= k.range.max_d;
}

}  // namespace

RowFacts row_facts(const Problem& p, int64_t row, bool rms) {
  RowFacts f;
  const auto first = p.x.begin() + row * p.cols;
  const std::vector<float> x(first, first + p.cols);
  for (float v : x) {
    if (!std::isfinite(v)) return {NAN, NAN, NAN};
    f.max_abs_x = std::max(f.max_abs_x, static_cast<double>(std::fabs(v)));
  }
  const LayerNormFwdReference ref = reference_layernorm_fwd(x, {}, {}, 1, p.cols, p.eps);
  const RowStats& s = ref.stats[0];
  f.mean_over_sigma = s.variance > 0 ? std::fabs(s.mean) / std::sqrt(s.variance)
                                     : std::numeric_limits<double>::infinity();
  f.r = s.r;
  if (rms) {
    const RmsNormFwdReference rr = reference_rmsnorm_fwd(x, {}, 1, p.cols, p.eps);
    f.r = rr.stats[0].r;
  }
  return f;
}

// Lengths: odd ones that leave SIMD tails, a transformer width (768), and in
// the default workload long rows where summation error grows.
// Batches of d = 64 (the many-rows class's widths, input_class.cpp): 4096
// rows, a small training batch, in both workloads (MEASURED); the default one
// adds 32768, a large one.
constexpr int64_t kQuickBatchRows = 4096;
AccuracyOptions quick_accuracy(uint64_t seed) { return {{3, 17, 64, 768}, 8, seed, {kQuickBatchRows}}; }
AccuracyOptions default_accuracy(uint64_t seed) {
  return {{3, 17, 64, 256, 768, 4096, 8192}, 10, seed, {kQuickBatchRows, 32768}};
}

int64_t accuracy_steps(const std::vector<const Kernel*>& kernels, const AccuracyOptions& options) {
  int64_t steps = 0;
  for (const Kernel* k : kernels)
    steps += props::kRowFamilyCount * static_cast<int64_t>(options.lengths.size()) * options.rows_per_family +
             (runs_batches(*k, options) ? static_cast<int64_t>(options.batch_rows.size()) : 0);
  return steps;
}

std::vector<KernelAccuracy> run_accuracy(const std::vector<const Kernel*>& kernels,
                                         const AccuracyOptions& options,
                                         const std::function<void(int64_t, int64_t)>& progress) {
  const int64_t total = accuracy_steps(kernels, options);
  int64_t done = 0;
  // Row facts are shared by kernels that drew the same row.
  std::map<std::tuple<int, int64_t, int, double, bool>, RowFacts> facts;
  std::vector<KernelAccuracy> out;
  for (const Kernel* k : kernels) {
    KernelAccuracy ka{k, {}};
    const bool rms = is_rms(k->op);
    const Kernel* reimplementation = reimplementation_of(*k);
    for (int f = 0; f < props::kRowFamilyCount; ++f) {
      const auto family = static_cast<props::RowFamily>(f);
      for (int64_t d : options.lengths) {
        for (int i = 0; i < options.rows_per_family; ++i) {
          const Problem p = make_problem(*k, family, d, i, options.seed);
          const auto key = std::make_tuple(f, d, i, props::max_abs_x(k->range, d), rms);
          auto it = facts.find(key);
          if (it == facts.end()) it = facts.emplace(key, row_facts(p, 0, rms)).first;
          RowResult r;
          r.family = std::string(props::to_string(family));
          r.d = d;
          r.index = i;
          r.eps = p.eps;
          r.affine = !p.gamma.empty();
          r.mean_over_sigma = it->second.mean_over_sigma;
          r.max_abs_x = it->second.max_abs_x;
          r.rstd = it->second.r;
          r.evaluation = evaluate(*k, p);
          if (reimplementation && r.evaluation.declined.empty())
            r.algorithm_ratio = evaluate(*k, p, reimplementation->bound).max_error_over_bound;
          ka.rows.push_back(std::move(r));
          if (progress) progress(++done, total);
        }
      }
    }
    for (const int64_t rows : runs_batches(*k, options) ? options.batch_rows : std::vector<int64_t>()) {
      const Problem p = make_batch(*k, rows, options.batch_d, options.seed);
      RowResult r;
      r.family = "many_rows";
      r.d = options.batch_d;
      r.rows = rows;
      r.eps = p.eps;
      r.affine = true;
      r.evaluation = evaluate(*k, p);
      // the row the worst error is on (row 0 when nothing ran), whose x the plots place it by
      r.index = static_cast<int>(std::clamp<int64_t>(r.evaluation.worst.row, 0, rows - 1));
      const RowFacts f = row_facts(p, r.index, rms);
      r.mean_over_sigma = f.mean_over_sigma;
      r.max_abs_x = f.max_abs_x;
      r.rstd = f.r;
      if (reimplementation && r.evaluation.declined.empty())
        r.algorithm_ratio = evaluate(*k, p, reimplementation->bound).max_error_over_bound;
      ka.rows.push_back(std::move(r));
      if (progress) progress(++done, total);
    }
    out.push_back(std::move(ka));
  }
  return out;
}

std::vector<OutputWorst> output_worsts(const KernelAccuracy& k) {
  std::vector<OutputWorst> worsts;
  for (const RowResult& row : k.rows) {
    if (!row.evaluation.declined.empty()) continue;
    for (const OutputError& o : row.evaluation.outputs) {
      auto it = std::find_if(worsts.begin(), worsts.end(),
                             [&](const OutputWorst& w) { return w.output == o.output; });
      if (it == worsts.end()) it = worsts.insert(worsts.end(), OutputWorst{o.output});
      if (o.max_error_over_bound > it->max_error_over_bound) {
        it->max_error_over_bound = o.max_error_over_bound;
        it->ratio_row = &row;
      }
      if (o.max_ulp > it->max_ulp) {
        it->max_ulp = o.max_ulp;
        it->ulp_row = &row;
      }
    }
  }
  return worsts;
}

}  // namespace normcheck::report
