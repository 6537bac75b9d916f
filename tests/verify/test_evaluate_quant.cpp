// evaluate() on kernels whose y is quantized (op_spec.h, Quantization): an
// RMSNorm in the manner of vLLM's fused quantizing kernels (bf16 in,
// y = bf16(bf16(x r) gamma), then cast by a static, per-token or per-block scale), run
// in this process as version-2 kernels. The correct kernel of each spec
// passes; each departure from the declared cast (the 16-bit rounding before
// the cast skipped, the absolute maximum taken before that rounding, ties
// away where even is declared, a division where the inverse is declared,
// -127 where -128 is declared) is caught, on the output that shows it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "quant_test_problem.h"
#include "test_seed.h"

namespace normcheck {
namespace {

float bf16(float v) { return float_from_bf16(bf16_from_float(v)); }

enum class Defect { none, casts_float, amax_unrounded, ties_away, divides, clamps_127 };

// The kernel of `spec` (its format, scale and apply taken from it), with one defect.
template <Defect defect>
void quant_rmsnorm(const nc_call* c, const Quantization& q) {
  const double qmax = quant_max(q.cast.format);
  QuantCast cast = q.cast;
  if (defect == Defect::ties_away) cast.ties_away = true;
  if (defect == Defect::clamps_127) cast.symmetric = true;
  for (int64_t i = 0; i < c->rows; ++i) {
    const auto* x = static_cast<const uint16_t*>(c->x.data) + i * c->x.row_stride;
    float sum = 0;
    for (int64_t j = 0; j < c->cols; ++j) sum += float_from_bf16(x[j]) * float_from_bf16(x[j]);
    const float r = 1.0f / std::sqrt(sum / static_cast<float>(c->cols) + c->eps);
    std::vector<float> y(static_cast<std::size_t>(c->cols)), unrounded(y.size());
    for (int64_t j = 0; j < c->cols; ++j) {
      const float g = c->gamma.data ? float_from_bf16(static_cast<const uint16_t*>(c->gamma.data)[j]) : 1.0f;
      unrounded[j] = bf16(float_from_bf16(x[j]) * r) * g;
      y[j] = defect == Defect::casts_float ? unrounded[j] : bf16(unrounded[j]);
    }
    // one scale per row, or per block of q.group columns
    const int64_t group = q.scale == ScaleKind::per_block ? q.group : c->cols;
    auto* out = static_cast<uint8_t*>(c->y.data) + i * c->y.row_stride;
    for (int64_t first = 0; first < c->cols; first += group) {
      const int64_t last = std::min(first + group, c->cols);
      float s = q.dynamic() ? 0 : *static_cast<const float*>(c->scale.data);
      if (q.dynamic()) {
        float a = 0;
        for (int64_t j = first; j < last; ++j)
          a = std::max(a, std::fabs(defect == Defect::amax_unrounded ? unrounded[j] : y[j]));
        s = std::max(std::min(a, q.scale_ub) / static_cast<float>(qmax), q.scale_min);
        static_cast<float*>(c->scale.data)[i * c->scale.row_stride + first / group] = s;
      }
      const float inverse = 1.0f / s;
      for (int64_t j = first; j < last; ++j) {
        const bool divide = (q.apply == ScaleApply::divide) != (defect == Defect::divides);
        const float t = divide ? y[j] / s : y[j] * inverse;
        out[j] = quant_code(q.cast.format, quant_cast(cast, t));
      }
    }
  }
}

const OpSpec kStaticFp8 =
    parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=static").spec.value();
const OpSpec kTokenInt8 =
    parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=int8 scale=token").spec.value();
const OpSpec kStaticInt8 =
    parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=int8 scale=static").spec.value();
const OpSpec kBlockFp8 =
    parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=block:16 scale_min=4.3596e-06")
        .spec.value();
const OpSpec kTokenFp8 = parse_spec(
    "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none quant=e4m3 scale=token scale_apply=divide "
    "scale_ub=4 scale_min=4.3596e-06").spec.value();

template <const OpSpec* spec, Defect defect>
void kernel_fn(const nc_call* c) { quant_rmsnorm<defect>(c, *spec->quant); }

template <const OpSpec* spec, Defect defect>
Kernel row() {
  return Kernel{.name = "test.quant", .op = op_of(*spec), .origin = Origin::plugin,
                .dtype = DType::bf16, .algorithm = "test", .fn = &kernel_fn<spec, defect>,
                .bound = default_rmsnorm_fwd_bound, .spec = spec, .takes_row_stride = true};
}

// quant_test_problem.h's problems.
Problem problem(std::mt19937_64& rng, const OpSpec& spec, bool pow2 = false) {
  return test::quant_problem(rng, spec, pow2);
}

// How many of `n` problems `k` fails, and the labels of the first failure.
struct Tally {
  int failed = 0;
  std::string output, consistent;
};
Tally run(const Kernel& k, int n, bool pow2 = false) {
  std::mt19937_64 rng(test::test_seed());
  Tally t;
  for (int i = 0; i < n; ++i) {
    const Evaluation ev = evaluate(k, problem(rng, *k.spec, pow2));
    EXPECT_TRUE(ev.declined.empty()) << ev.declined;
    EXPECT_FALSE(ev.unwritten_output || ev.out_of_bounds_write || ev.wrote_input);
    if (ev.pass) continue;
    if (t.failed++ == 0) {
      t.output = ev.worst.output;
      for (const std::string& s : ev.consistent_policies) t.consistent += s + ";";
    }
  }
  return t;
}

TEST(EvaluateQuant, TheDeclaredCastsPass) {
  EXPECT_EQ(run(row<&kStaticFp8, Defect::none>(), 30).failed, 0);
  EXPECT_EQ(run(row<&kTokenInt8, Defect::none>(), 30).failed, 0);
  EXPECT_EQ(run(row<&kStaticInt8, Defect::none>(), 30).failed, 0);
  EXPECT_EQ(run(row<&kTokenFp8, Defect::none>(), 30).failed, 0);
  EXPECT_EQ(run(row<&kBlockFp8, Defect::none>(), 30).failed, 0);  // blocks of 16, the last one shorter on most d
}

// The float32 value cast where y is declared rounded to bf16 first: the
// policy with y=f32 admits the outputs (on the per-token kernel its scale,
// taken over the same values, is off first).
TEST(EvaluateQuant, ACastOfTheFloatValueIsAnotherPolicy) {
  const Tally a = run(row<&kStaticFp8, Defect::casts_float>(), 30), b = run(row<&kTokenInt8, Defect::casts_float>(), 30);
  EXPECT_GT(a.failed, 0);
  EXPECT_EQ(a.output, "y");
  EXPECT_GT(b.failed, 0);
  EXPECT_EQ(b.output, "scale");
  for (const Tally& t : {a, b}) EXPECT_NE(t.consistent.find("y=f32"), std::string::npos) << t.consistent;
}

TEST(EvaluateQuant, AnAbsoluteMaximumBeforeTheRoundingIsAWrongScale) {
  for (const Tally& t : {run(row<&kTokenInt8, Defect::amax_unrounded>(), 30), run(row<&kBlockFp8, Defect::amax_unrounded>(), 30)}) {
    EXPECT_GT(t.failed, 0);
    EXPECT_EQ(t.output, "scale");
  }
}

TEST(EvaluateQuant, TiesAwayWhereEvenIsDeclared) {
  const Tally t = run(row<&kStaticInt8, Defect::ties_away>(), 30, /*pow2=*/true);
  EXPECT_GT(t.failed, 0);
  EXPECT_EQ(t.output, "y");
}

TEST(EvaluateQuant, ADivisionWhereTheInverseIsDeclared) {
  const Tally a = run(row<&kStaticFp8, Defect::divides>(), 60), b = run(row<&kTokenFp8, Defect::divides>(), 60);
  EXPECT_GT(a.failed + b.failed, 0);
}

TEST(EvaluateQuant, AClampAtMinus127WhereMinus128IsDeclared) {
  const Tally t = run(row<&kStaticInt8, Defect::clamps_127>(), 30);
  EXPECT_GT(t.failed, 0);
  EXPECT_EQ(t.output, "y");
}

TEST(EvaluateQuant, AStaticScaleIsNeeded) {
  std::mt19937_64 rng(1);
  Problem p = problem(rng, kStaticFp8);
  p.scale = 0;
  EXPECT_NE(evaluate(row<&kStaticFp8, Defect::none>(), p).declined.find("static scale"), std::string::npos);
}

}  // namespace
}  // namespace normcheck
