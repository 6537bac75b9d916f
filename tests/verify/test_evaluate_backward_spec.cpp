// evaluate() on backward kernels whose spec is not their op's own
// (evaluate/backward_spec.h): gamma, the saved statistics, dgamma and dbeta
// in 16-bit formats, and the weight 1 + gamma, as training kernels ship them
// (a Gemma RMSNorm backward with bf16 weights and dgamma, a LayerNorm
// backward reading bf16-saved mean and rstd). Each kernel runs in this
// process as a version-2 kernel; the correct one of each spec passes, and
// each realistic mistake is caught on the output that shows it: 1 + gamma
// forgotten in dx, dgamma and dbeta summed in bf16 over the rows (PyTorch
// 1.13's CPU bf16 LayerNorm backward), statistics rounded to bf16 where the
// spec declares float32.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_policy.h"
#include "test_seed.h"

namespace normcheck {
namespace {

float bf16(float v) { return float_from_bf16(bf16_from_float(v)); }

DType dtype_of(int32_t t) { return t == NC_BF16 ? DType::bf16 : t == NC_F16 ? DType::f16 : DType::f32; }

// Element (i, j) of a tensor of the call, widened; 1 x cols and rows x 1 tensors alike.
float get(const nc_tensor& t, int64_t i, int64_t j) {
  const int64_t at = i * t.row_stride + j;
  if (t.dtype == NC_F32) return static_cast<const float*>(t.data)[at];
  return from_16(dtype_of(t.dtype), static_cast<const uint16_t*>(t.data)[at]);
}
void put(const nc_tensor& t, int64_t i, int64_t j, float v) {
  const int64_t at = i * t.row_stride + j;
  if (t.dtype == NC_F32) static_cast<float*>(t.data)[at] = v;
  else static_cast<uint16_t*>(t.data)[at] = to_16(dtype_of(t.dtype), v);
}

enum class Defect { none, forgets_one_plus, sums_in_bf16, stats_in_bf16, forgets_dresidual };

// v rounded to t (nothing for no rounding point).
float rounded(std::optional<DType> t, float v) { return t && *t != DType::f32 ? from_16(*t, to_16(*t, v)) : v; }

// The spec's backward as a kernel that follows it: xhat = (x - mean) r from
// the saved statistics, g = w dy, dx = r (g - mean g - xhat mean(g xhat))
// (RMSNorm: no mean g) in float32, each rounding point of the spec applied
// where it says, sums kept in the spec's accumulator format, dgamma and dbeta
// summed over the rows in blocks of R (reduce=block:R:P, the block stored in
// P) or in one sum, and written in their formats.
template <const OpSpec* spec, Defect defect>
void backward(const nc_call* c) {
  const bool layer = spec->norm == NormKind::layernorm;
  const bool one_plus = spec->weight == Weight::one_plus_gamma && defect != Defect::forgets_one_plus;
  const std::optional<DType> acc = defect == Defect::sums_in_bf16 ? std::optional<DType>(DType::bf16) : spec->acc;
  const auto add = [&](float sum, float term) { return rounded(acc, sum + term); };
  // the defect keeps one running sum over every row in bf16
  const int64_t block = spec->reduce && defect != Defect::sums_in_bf16 ? spec->reduce->rows : c->rows;
  const std::size_t cols = static_cast<std::size_t>(c->cols);
  std::vector<float> dgamma(cols), dbeta(cols), part_gamma(cols), part_beta(cols), xhat(cols), g(cols);
  for (int64_t i = 0; i < c->rows; ++i) {
    float r = get(c->rstd, i, 0), mu = layer ? get(c->mean, i, 0) : 0;
    if (defect == Defect::stats_in_bf16) r = bf16(r), mu = bf16(mu);
    float mean_g = 0, mean_gx = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      const float gamma = c->gamma.data ? get(c->gamma, 0, j) : (spec->weight == Weight::one_plus_gamma ? 0 : 1);
      xhat[j] = rounded(spec->rounding_at(RoundingPoint::xhat), (get(c->x, i, j) - mu) * r);
      g[j] = rounded(spec->rounding_at(RoundingPoint::dyw), (one_plus ? 1 + gamma : gamma) * get(c->dy, i, j));
      mean_g = add(mean_g, g[j]);
      mean_gx = add(mean_gx, g[j] * xhat[j]);
    }
    mean_g /= static_cast<float>(c->cols);
    mean_gx /= static_cast<float>(c->cols);
    for (std::size_t j = 0; j < cols; ++j) {
      float dx = r * (g[j] - (layer ? mean_g : 0) - xhat[j] * mean_gx);
      // with `add`: the residual stream's gradient joins dx, written again for the residual
      if (c->residual.data && defect != Defect::forgets_dresidual) dx += get(c->residual, i, j);
      put(c->dx, i, j, dx);
      if (c->residual_out.data) put(c->residual_out, i, j, dx);
      const float dy = get(c->dy, i, j);
      part_gamma[j] = add(part_gamma[j], rounded(spec->rounding_at(RoundingPoint::dw_row), dy * xhat[j]));
      part_beta[j] = add(part_beta[j], dy);
    }
    if ((i + 1) % block == 0 || i + 1 == c->rows) {
      const std::optional<DType> stored = spec->reduce ? std::optional<DType>(spec->reduce->partial) : std::nullopt;
      for (std::size_t j = 0; j < cols; ++j) {
        dgamma[j] += rounded(stored, part_gamma[j]);
        dbeta[j] += rounded(stored, part_beta[j]);
        part_gamma[j] = part_beta[j] = 0;
      }
    }
  }
  for (std::size_t j = 0; j < cols; ++j) {
    if (c->dgamma.data) put(c->dgamma, 0, static_cast<int64_t>(j), dgamma[j]);
    if (c->dbeta.data) put(c->dbeta, 0, static_cast<int64_t>(j), dbeta[j]);
  }
}

const OpSpec kGemma =
    parse_spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 weight=1+gamma").spec.value();
const OpSpec kLayerNormBf16Stats =
    parse_spec("layernorm bwd dtype=bf16 gamma=bf16 mean=bf16 rstd=bf16 dgamma=bf16 dbeta=bf16").spec.value();
const OpSpec kLayerNormBf16 = parse_spec("layernorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 dbeta=bf16").spec.value();
const OpSpec kLayerNormF16Stats = parse_spec("layernorm bwd dtype=f16 mean=f16 rstd=f16").spec.value();
// Liger-Kernel's RMSNorm backward in its llama mode: m = T(dy w), dW += T(dy T(x r)),
// per-program partials of rows summed in float32, dW cast to T.
const OpSpec kLigerLlama = parse_spec(
    "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 reduce=block:64:f32").spec.value();
// Apex-style two-stage dgamma and dbeta: partials of 32 rows kept in bf16.
const OpSpec kBlocksInBf16 = parse_spec("layernorm bwd dtype=bf16 gamma=bf16 reduce=block:32:bf16").spec.value();
// A fused add + RMSNorm backward (flash-attention, Liger-Kernel): dx plus the
// residual stream's gradient, written as dx and as the residual's gradient in float32.
const OpSpec kFusedAdd = parse_spec("rmsnorm bwd dtype=bf16 gamma=bf16 add residual_out=f32").spec.value();
// Every sum in bf16 (Liger's casting mode none), on rows short enough for a bound.
const OpSpec kAccBf16 = parse_spec("rmsnorm bwd dtype=bf16 gamma=bf16 acc=bf16").spec.value();

template <const OpSpec* spec, Defect defect>
Kernel row() {
  return Kernel{.name = "test.backward_spec", .op = op_of(*spec), .origin = Origin::plugin,
                .dtype = spec->dtype_of(TensorName::x), .algorithm = "test", .fn = &backward<spec, defect>,
                .bound = plugin_bound(op_of(*spec), spec->dtype_of(TensorName::x)), .spec = spec};
}

// Rows of values of x's format: x ~ mu + N(0, 1) with |mu| up to 4, dy ~
// N(0.5, 1) (a mean that makes dbeta grow with the rows), gamma of gamma's
// format around 1 (0.1 N(0, 1) under 1 + gamma).
Problem problem(std::mt19937_64& rng, const OpSpec& spec, int64_t rows, int64_t cols, bool shifted = false) {
  std::normal_distribution<double> normal;
  const DType t = spec.dtype_of(TensorName::x);
  const auto in = [&](double v) { return t == DType::f32 ? static_cast<float>(v) : from_16(t, to_16(t, static_cast<float>(v))); };
  Problem p;
  p.rows = rows;
  p.cols = cols;
  p.eps = 1e-5f;
  for (int64_t i = 0; i < rows; ++i) {
    const double mu = shifted ? 2 : 4 * (normal(rng) > 0 ? 1 : -1) * std::fabs(normal(rng)) / 3;
    for (int64_t j = 0; j < cols; ++j) {
      p.x.push_back(in(mu + normal(rng)));
      p.dy.push_back(in(0.5 + normal(rng)));
    }
  }
  if (spec.add)  // the residual stream's gradient, of dy's scale
    for (int64_t i = 0; i < rows * cols; ++i) p.residual.push_back(in(normal(rng)));
  for (int64_t j = 0; j < cols; ++j)
    p.gamma.push_back(bf16(static_cast<float>(spec.weight == Weight::one_plus_gamma ? 0.1 * normal(rng) : 1 + 0.3 * normal(rng))));
  return p;
}

struct Outcome {
  int failed = 0, declined = 0;
  std::string output, label_detail;
};
Outcome run(const Kernel& k, int problems, int64_t rows, int64_t cols, bool shifted = false) {
  std::mt19937_64 rng(test::test_seed());
  Outcome o;
  for (int n = 0; n < problems; ++n) {
    const Evaluation ev = evaluate(k, problem(rng, *k.spec, rows, cols, shifted));
    if (!ev.declined.empty()) {
      ++o.declined;
      o.label_detail = ev.declined;
      continue;
    }
    EXPECT_FALSE(ev.unwritten_output || ev.out_of_bounds_write || ev.wrote_input);
    if (!ev.pass && o.failed++ == 0) {
      o.output = ev.worst.output;
      o.label_detail = to_text(*k.spec) + ": " + ev.worst.output + " ratio " + std::to_string(ev.max_error_over_bound) +
                       " col " + std::to_string(ev.worst.col) + " computed " + std::to_string(ev.worst.computed) +
                       " exact " + std::to_string(ev.worst.exact) + " allowed " + std::to_string(ev.worst.allowed);
    }
  }
  return o;
}

TEST(EvaluateBackwardSpec, TheSpecsAreJudged) {
  for (const OpSpec* s : {&kGemma, &kLayerNormBf16Stats, &kLayerNormBf16, &kLayerNormF16Stats, &kLigerLlama,
                          &kBlocksInBf16, &kAccBf16, &kFusedAdd})
    EXPECT_EQ(spec_not_judged(*s), "") << to_text(*s);
}

TEST(EvaluateBackwardSpec, CorrectKernelsPass) {
  for (const Outcome& o : {run(row<&kGemma, Defect::none>(), 20, 3, 96), run(row<&kLayerNormBf16Stats, Defect::none>(), 20, 3, 96),
                           run(row<&kLayerNormBf16, Defect::none>(), 20, 3, 96),
                           run(row<&kLayerNormF16Stats, Defect::none>(), 20, 3, 96)}) {
    EXPECT_EQ(o.failed, 0) << o.output;
    EXPECT_EQ(o.declined, 0) << o.label_detail;
  }
}

TEST(EvaluateBackwardSpec, RoundingPointsAccumulatorsAndBlocksPass) {
  for (const Outcome& o : {run(row<&kLigerLlama, Defect::none>(), 10, 256, 64), run(row<&kBlocksInBf16, Defect::none>(), 10, 256, 64),
                           run(row<&kAccBf16, Defect::none>(), 10, 3, 32), run(row<&kFusedAdd, Defect::none>(), 10, 3, 96)}) {
    EXPECT_EQ(o.failed, 0) << o.label_detail;
    EXPECT_EQ(o.declined, 0) << o.label_detail;
  }
}

// A Liger-style kernel that keeps one dW sum over every row in bf16 where its
// spec declares float32 partials of 64 rows: caught on dgamma over 2048 rows
// of x ~ 2 + N(0, 1) (dy xhat near 0.45 on average, so dgamma grows with the
// rows and its bf16 sum stops growing), while the kernel as declared passes there.
TEST(EvaluateBackwardSpec, APartialKeptInBf16WhereFloat32IsDeclaredIsCaught) {
  EXPECT_EQ(run(row<&kLigerLlama, Defect::none>(), 2, 2048, 16, /*shifted=*/true).failed, 0);
  const Outcome o = run(row<&kLigerLlama, Defect::sums_in_bf16>(), 2, 2048, 16, /*shifted=*/true);
  EXPECT_EQ(o.failed, 2);
  EXPECT_EQ(o.output, "dgamma");
}

// The rounding points the kernel declares are part of its bound: the same
// Liger kernel declared without them (rounding xhat, dy w and each dW term
// in bf16 all the same) is caught.
const OpSpec kLigerUndeclared = parse_spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 reduce=block:64:f32").spec.value();
void liger_as_undeclared(const nc_call* c) { backward<&kLigerLlama, Defect::none>(c); }
TEST(EvaluateBackwardSpec, UndeclaredRoundingPointsAreCaught) {
  Kernel k = row<&kLigerUndeclared, Defect::none>();
  k.fn = &liger_as_undeclared;
  EXPECT_GT(run(k, 10, 8, 256).failed, 0);
}

// dgamma and dbeta over many rows: float32 sums written in bf16 pass;
// running sums kept in bf16 stagnate once the sum's spacing passes the
// terms (dbeta near 0.5 rows) and are caught.
TEST(EvaluateBackwardSpec, SumsKeptInBf16OverManyRowsAreCaught) {
  EXPECT_EQ(run(row<&kLayerNormBf16, Defect::none>(), 2, 2048, 16).failed, 0);
  const Outcome o = run(row<&kLayerNormBf16, Defect::sums_in_bf16>(), 2, 2048, 16);
  EXPECT_EQ(o.failed, 2);
  EXPECT_TRUE(o.output == "dbeta" || o.output == "dgamma") << o.output;
}

TEST(EvaluateBackwardSpec, AForgottenDresidualIsCaught) {
  const Outcome o = run(row<&kFusedAdd, Defect::forgets_dresidual>(), 10, 3, 96);
  EXPECT_EQ(o.failed, 10);
  EXPECT_TRUE(o.output == "dx" || o.output == "dresidual") << o.output;
}

TEST(EvaluateBackwardSpec, OnePlusGammaForgottenInDxIsCaught) {
  const Outcome o = run(row<&kGemma, Defect::forgets_one_plus>(), 10, 3, 96);
  EXPECT_EQ(o.failed, 10);
  EXPECT_EQ(o.output, "dx");
}

// The kernel's forward saved its statistics in bf16 while its spec declares
// float32: the dx and dgamma it gives are off by bf16's rounding of rstd,
// far past a bound that takes rstd within float32's.
TEST(EvaluateBackwardSpec, StatisticsRoundedToBf16WhereFloat32IsDeclaredAreCaught) {
  const Outcome o = run(row<&kLayerNormBf16, Defect::stats_in_bf16>(), 10, 3, 96);
  EXPECT_GT(o.failed, 5);
  EXPECT_TRUE(o.output == "dx" || o.output == "dgamma") << o.output;  // xhat enters both
}

// 1 + gamma_j that is not a float32 value: the problem is declined, naming the column.
TEST(EvaluateBackwardSpec, OnePlusGammaOutsideFloat32IsDeclined) {
  std::mt19937_64 rng(1);
  Problem p = problem(rng, kGemma, 1, 8);
  p.gamma[3] = 0x1p-40f;
  const Evaluation ev = evaluate(row<&kGemma, Defect::none>(), p);
  EXPECT_NE(ev.declined.find("1 + gamma_3"), std::string::npos) << ev.declined;
}

TEST(EvaluateBackwardSpec, OtherSpecsSayWhyTheyAreNotJudged) {
  const OpSpec rms_bias = parse_spec("rmsnorm bwd bias").spec.value();
  EXPECT_NE(spec_not_judged(rms_bias).find("bias"), std::string::npos);
  const OpSpec dy_other = parse_spec("layernorm bwd dtype=bf16 dy=f32").spec.value();
  EXPECT_NE(spec_not_judged(dy_other).find("dy"), std::string::npos);
  EXPECT_EQ(spec_not_judged(parse_spec("layernorm fwd dtype=bf16 round=xhat:bf16").spec.value()), "");
}

// ---- which backward policy: evaluate() with EvaluateOptions::identify ----

// Apex's two-stage backward as the example plugin declares it
// (examples/plugin/v2_backward.h, V2_SPEC_APEX_TWO_STAGE_BWD), and the table's
// float32 LayerNorm backward.
const OpSpec kApexTwoStage =
    parse_spec("layernorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 dbeta=bf16 reduce=block:32:f32").spec.value();
const OpSpec kLayerNormF32 = parse_spec("layernorm bwd").spec.value();

// Over `problems` problems, per candidate policy (its text), the elements
// outside its allowances (Evaluation::PolicyFit::outside): every candidate
// of the kernel's spec is fitted on every problem, with no figure of its own.
std::map<std::string, int64_t> fits(const Kernel& k, int problems, int64_t rows, int64_t cols) {
  std::mt19937_64 rng(test::test_seed());
  EvaluateOptions options;
  options.identify = true;
  std::map<std::string, int64_t> outside;
  for (int n = 0; n < problems; ++n) {
    const Evaluation ev = evaluate(k, problem(rng, *k.spec, rows, cols), options);
    EXPECT_EQ(ev.declined, "");
    EXPECT_EQ(ev.policy_fits.size(), candidate_policies(*k.spec).size());
    for (const Evaluation::PolicyFit& f : ev.policy_fits) {
      outside[f.spec] += f.outside;
      EXPECT_TRUE(std::isnan(f.exact_math_ulp)) << f.spec;  // a backward policy has no result of its own
    }
  }
  return outside;
}

// Each kernel that follows its spec is consistent with it (no element
// outside: the same checks that pass it in CorrectKernelsPass and
// RoundingPointsAccumulatorsAndBlocksPass, on those tests' shapes).
TEST(EvaluateBackwardSpec, IdentifyFindsEachKernelConsistentWithItsDeclaredPolicy) {
  struct Run {
    Kernel kernel;
    int64_t rows, cols;
  } runs[] = {{row<&kLigerLlama, Defect::none>(), 256, 64}, {row<&kApexTwoStage, Defect::none>(), 256, 64},
              {row<&kFusedAdd, Defect::none>(), 3, 96},     {row<&kGemma, Defect::none>(), 3, 96}};
  for (const Run& r : runs) {
    SCOPED_TRACE(to_text(*r.kernel.spec));
    EXPECT_EQ(fits(r.kernel, 3, r.rows, r.cols).at(to_text(*r.kernel.spec)), 0);
  }
}

// The negative control: Liger's llama-mode kernel declared without its
// roundings (kLigerUndeclared, caught in UndeclaredRoundingPointsAreCaught on
// the same problems) is outside its declared policy and consistent with the
// candidate that rounds xhat, dy w and each dW term in bf16, Liger's by name.
TEST(EvaluateBackwardSpec, IdentifyTellsTheLlamaPolicyFromAnUndeclaredOne) {
  Kernel k = row<&kLigerUndeclared, Defect::none>();
  k.fn = &liger_as_undeclared;
  const std::map<std::string, int64_t> outside = fits(k, 10, 8, 256);
  EXPECT_GT(outside.at(to_text(kLigerUndeclared)), 0);
  EXPECT_EQ(outside.at(to_text(kLigerLlama)), 0);
  EXPECT_NE(known_policy_name(kLigerLlama).find("llama mode"), std::string_view::npos);
  EXPECT_EQ(known_policy_name(kLigerUndeclared), "");
}

// Float32 activations and gradients: nothing in 16 bits to round to, so the
// spec is its only candidate (spec_policy.h, candidate_policies).
TEST(EvaluateBackwardSpec, IdentifyOnAFloat32BackwardFitsItsOwnSpecAlone) {
  const std::map<std::string, int64_t> outside = fits(row<&kLayerNormF32, Defect::none>(), 2, 3, 96);
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_EQ(outside.begin()->first, to_text(kLayerNormF32));
  EXPECT_EQ(outside.begin()->second, 0);
}

}  // namespace
}  // namespace normcheck
