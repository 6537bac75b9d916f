// evaluate() on quantizing kernels where a y is NaN, and on
// TransformerEngine's convention (docs/semantics.md, "Quantized outputs on a
// non-finite row"; docs/ops.md, "Quantized outputs"):
//   - a NaN y's code is the format's NaN; a finite code there (vLLM's clamp
//     writes 448, int8 has no NaN) is a `nan` finding unless the spec
//     declares nan=clamp, whose codes are +max (fp8) and 0 (int8);
//   - a dynamic scale or an amax over a NaN y is NaN; fmaxf's, which passes
//     over the NaN, is a `nan` finding;
//   - scale_apply=multiply: t = y * s and scale_inv = fl32(1 / s) written; a
//     kernel that divides, or writes another scale_inv, is caught on y or on
//     scale_inv; the amax is the largest |y| in y's dtype.
// The kernel is an RMSNorm run in this process as a version-2 kernel, each
// behaviour a field of Behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "quant_test_problem.h"
#include "test_seed.h"

namespace normcheck {
namespace {

float bf16(float v) { return float_from_bf16(bf16_from_float(v)); }

// How the kernel departs from its spec (none: it follows it).
struct Behaviour {
  bool clamp_nan = false;         // fp8: t = fmaxf(-max, fminf(t, max)) (vLLM): a NaN t gives +max
  bool fmax_skips_nan = false;    // the maximum of a scale and of the amax is fmaxf's
  bool divides = false;           // t = y / s where the spec multiplies
  bool inverts = false;           // t = y * fl32(1 / s) where the spec multiplies
  bool amax_before_weight = false;  // the amax over |x r|, not over y
  bool scale_inv_is_scale = false;  // scale_inv = s
};
Behaviour g_behaviour;

float nan_propagating_max(float a, float v) { return std::isnan(a) || std::isnan(v) ? NAN : std::max(a, v); }

// The spec's kernel: y = bf16(bf16(x r) gamma) under round=xhat:bf16 and a
// bf16 y, (x r) gamma in float32 under y=f32; a row with a NaN x is all NaN
// (the row-NaN convention).
template <const OpSpec* spec>
void quant_kernel(const nc_call* c) {
  const Behaviour& b = g_behaviour;
  const Quantization& q = *spec->quant;
  float (*const max)(float, float) = b.fmax_skips_nan ? +[](float a, float v) { return std::fmax(a, v); } : nan_propagating_max;
  const float qmax = static_cast<float>(quant_max(q.cast.format));
  const bool y_bf16 = spec->dtype_of(TensorName::y) == DType::bf16;
  float amax = 0;
  for (int64_t i = 0; i < c->rows; ++i) {
    const auto* x = static_cast<const uint16_t*>(c->x.data) + i * c->x.row_stride;
    float sum = 0;
    for (int64_t j = 0; j < c->cols; ++j) sum += float_from_bf16(x[j]) * float_from_bf16(x[j]);
    const float r = std::isnan(sum) ? NAN : 1.0f / std::sqrt(sum / static_cast<float>(c->cols) + c->eps);
    std::vector<float> y(static_cast<std::size_t>(c->cols));
    for (int64_t j = 0; j < c->cols; ++j) {
      const float g = float_from_bf16(static_cast<const uint16_t*>(c->gamma.data)[j]);
      const float xr = float_from_bf16(x[j]) * r;
      const float v = (spec->rounding_at(RoundingPoint::xhat) ? bf16(xr) : xr) * g;
      y[static_cast<std::size_t>(j)] = y_bf16 ? bf16(v) : v;
      amax = max(amax, std::fabs(b.amax_before_weight ? xr : y[static_cast<std::size_t>(j)]));
    }
    // one scale per row, or per block of q.group columns
    const int64_t group = q.scale == ScaleKind::per_block ? q.group : c->cols;
    auto* out = static_cast<uint8_t*>(c->y.data) + i * c->y.row_stride;
    for (int64_t j = 0; j < c->cols; ++j) {
      const std::size_t k = static_cast<std::size_t>(j);
      float s = q.dynamic() ? 0 : *static_cast<const float*>(c->scale.data);
      if (q.dynamic()) {
        float a = 0;
        for (int64_t m = j / group * group; m < std::min(c->cols, (j / group + 1) * group); ++m)
          a = max(a, std::fabs(y[static_cast<std::size_t>(m)]));
        s = std::isnan(a) ? a : std::max(std::min(a, q.scale_ub) / qmax, q.scale_min);
        static_cast<float*>(c->scale.data)[i * c->scale.row_stride + j / group] = s;
      }
      const float inverse = 1.0f / s;
      float t = b.divides                              ? y[k] / s
                : b.inverts                            ? y[k] * inverse
                : q.apply == ScaleApply::multiply      ? y[k] * s
                : q.apply == ScaleApply::divide        ? y[k] / s
                                                       : y[k] * inverse;
      if (b.clamp_nan && q.cast.format != QuantFormat::int8) t = std::fmax(-qmax, std::fmin(t, qmax));
      out[j] = quant_code(q.cast.format, quant_cast(q.cast, t));  // int8: a NaN t gives 0
    }
  }
  if (c->scale_inv.data) {
    const float s = *static_cast<const float*>(c->scale.data);
    *static_cast<float*>(c->scale_inv.data) = b.scale_inv_is_scale ? s : 1.0f / s;
  }
  if (c->amax.data) *static_cast<float*>(c->amax.data) = amax;
}

OpSpec spec(const char* text) { return parse_spec(text).spec.value(); }
#define LLAMA "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none "
const OpSpec kStaticFp8 = spec(LLAMA "quant=e4m3 scale=static");
const OpSpec kStaticFp8Clamp = spec(LLAMA "quant=e4m3 scale=static nan=clamp");
const OpSpec kStaticInt8 = spec(LLAMA "quant=int8 scale=static");
const OpSpec kStaticInt8Clamp = spec(LLAMA "quant=int8 scale=static nan=clamp");
const OpSpec kTokenFp8 = spec(LLAMA "quant=e4m3 scale=token scale_min=4.3596e-06");
const OpSpec kBlockInt8 = spec(LLAMA "quant=int8 scale=block:16 scale_min=1.1920929e-07 nan=clamp");
// TransformerEngine's RMSNorm with an fp8 output: the float32 y times the scale
const OpSpec kTe = spec("rmsnorm fwd dtype=bf16 gamma=bf16 y=f32 stats=none quant=e4m3 scale=static "
                        "scale_apply=multiply amax");
#undef LLAMA

template <const OpSpec* s>
Kernel row() {
  return Kernel{.name = "test.quant_nonfinite", .op = op_of(*s), .origin = Origin::plugin, .dtype = DType::bf16,
                .algorithm = "test", .fn = &quant_kernel<s>, .bound = default_rmsnorm_fwd_bound, .spec = s,
                .takes_row_stride = true};
}

// quant_test_problem.h's problems.
Problem problem(std::mt19937_64& rng, const OpSpec& s, bool nan_row) {
  return test::quant_problem(rng, s, false, nan_row);
}

// How many of 30 problems `k` fails under `b`, and the first failure's worst
// output, whether it was a non-finite finding, and the casts it names.
struct Result {
  int failed = 0;
  std::string output, casts;
  bool nan = false;
};
Result run(const Kernel& k, Behaviour b, bool nan_row) {
  g_behaviour = b;
  std::mt19937_64 rng(test::test_seed());
  Result t;
  for (int i = 0; i < 30; ++i) {
    const Evaluation ev = evaluate(k, problem(rng, *k.spec, nan_row));
    EXPECT_TRUE(ev.declined.empty()) << ev.declined;
    EXPECT_FALSE(ev.unwritten_output || ev.out_of_bounds_write || ev.wrote_input);
    if (ev.pass) continue;
    if (t.failed++ == 0) {
      t.output = ev.worst.output;
      t.nan = ev.nonfinite_mismatch;
      for (const std::string& s : ev.consistent_casts) t.casts += s + ";";
    }
  }
  g_behaviour = {};
  return t;
}

TEST(EvaluateQuantNonFinite, ANaNYHasTheFormatsNaNCode) {
  EXPECT_EQ(run(row<&kStaticFp8>(), {}, true).failed, 0);
  EXPECT_EQ(run(row<&kTokenFp8>(), {}, true).failed, 0);  // and a NaN scale
  EXPECT_EQ(run(row<&kTe>(), {}, true).failed, 0);        // and a NaN amax
}

// vLLM's clamp fmaxf(-448, fminf(t, 448)) writes 448 for a NaN t: a finite
// code hides the fault, unless the spec declares the convention.
TEST(EvaluateQuantNonFinite, TheClampsCodeForANaNIsAFindingUnlessDeclared) {
  const Result hidden = run(row<&kStaticFp8>(), {.clamp_nan = true}, true);
  EXPECT_EQ(hidden.failed, 30);
  EXPECT_TRUE(hidden.nan);
  EXPECT_EQ(hidden.output, "y");
  EXPECT_EQ(run(row<&kStaticFp8Clamp>(), {.clamp_nan = true}, true).failed, 0);
  EXPECT_EQ(run(row<&kStaticFp8Clamp>(), {}, true).failed, 0);  // the NaN code stays admitted
  // on finite rows the clamp is the declared saturation
  EXPECT_EQ(run(row<&kStaticFp8>(), {.clamp_nan = true}, false).failed, 0);
}

// int8 has no NaN: its 0 for a NaN (cvt.rni.sat.s8.f32) is admitted under nan=clamp alone.
TEST(EvaluateQuantNonFinite, Int8HasNoCodeForANaNUnlessDeclared) {
  const Result hidden = run(row<&kStaticInt8>(), {}, true);
  EXPECT_EQ(hidden.failed, 30);
  EXPECT_TRUE(hidden.nan);
  EXPECT_EQ(run(row<&kStaticInt8Clamp>(), {}, true).failed, 0);
  EXPECT_EQ(run(row<&kBlockInt8>(), {}, true).failed, 0);
}

// fmaxf passes over a NaN |y|: the row's scale, and the tensor's amax, come out finite.
TEST(EvaluateQuantNonFinite, AMaximumThatSkipsANaNIsAFinding) {
  const Result scale = run(row<&kTokenFp8>(), {.fmax_skips_nan = true}, true);
  EXPECT_EQ(scale.failed, 30);
  EXPECT_TRUE(scale.nan);
  EXPECT_EQ(scale.output, "scale");
  const Result block = run(row<&kBlockInt8>(), {.fmax_skips_nan = true}, true);
  EXPECT_EQ(block.failed, 30);
  EXPECT_TRUE(block.nan);
  const Result amax = run(row<&kTe>(), {.fmax_skips_nan = true}, true);
  EXPECT_EQ(amax.failed, 30);
  EXPECT_TRUE(amax.nan);
  EXPECT_EQ(amax.output, "amax");
  // on finite rows fmaxf is the maximum
  EXPECT_EQ(run(row<&kTokenFp8>(), {.fmax_skips_nan = true}, false).failed, 0);
  EXPECT_EQ(run(row<&kTe>(), {.fmax_skips_nan = true}, false).failed, 0);
}

TEST(EvaluateQuantNonFinite, TransformerEnginesConventionPasses) { EXPECT_EQ(run(row<&kTe>(), {}, false).failed, 0); }

// The multiplying scale read as a dequantizing one (y / s, or y fl32(1 / s)):
// every code off, the cast that admits them named.
TEST(EvaluateQuantNonFinite, AScaleAppliedOtherwiseThanMultiplied) {
  for (const Behaviour b : {Behaviour{.divides = true}, Behaviour{.inverts = true}}) {
    const Result t = run(row<&kTe>(), b, false);
    EXPECT_EQ(t.failed, 30);
    EXPECT_FALSE(t.nan);
    EXPECT_EQ(t.output, "y");
    if (b.divides) {
      EXPECT_NE(t.casts.find("scale_apply=divide"), std::string::npos) << t.casts;
    }
  }
}

TEST(EvaluateQuantNonFinite, AWrongScaleInvOrAmax) {
  const Result inv = run(row<&kTe>(), {.scale_inv_is_scale = true}, false);
  EXPECT_EQ(inv.failed, 30);
  EXPECT_EQ(inv.output, "scale_inv");
  const Result amax = run(row<&kTe>(), {.amax_before_weight = true}, false);
  EXPECT_GT(amax.failed, 0);
  EXPECT_EQ(amax.output, "amax");
}

}  // namespace
}  // namespace normcheck
