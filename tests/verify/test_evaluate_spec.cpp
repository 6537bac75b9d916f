// evaluate() on a kernel with a spec of its own (Kernel::spec, a version-2
// kernel called with tensor descriptors, here in this process): a correct
// kernel of the spec's policy passes on strided rows; a write into an input
// row (its first element or its last) is writes_input, a write into the
// padding between rows (the first padding element or the last) or an ignored
// stride is out_of_bounds; a kernel of another policy fails and names it;
// what the kernel cannot take is declined with the reason. A rounding point
// past its format's range is the policy's infinity: a product rounded past
// 65504 passes as -inf, a stored sum past it makes a non-finite row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "test_seed.h"

namespace normcheck {
namespace {

const OpSpec kLlama = parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16").spec.value();

float bf16(float v) { return float_from_bf16(bf16_from_float(v)); }
float at(const nc_tensor& t, int64_t i, int64_t j) {
  return from_16(DType::bf16, static_cast<const uint16_t*>(t.data)[i * t.row_stride + j]);
}

// Hugging Face's LlamaRMSNorm in float32: y = bf16(bf16(x r) gamma). `defect`
// selects one departure from it.
enum class Defect { none, rounds_once, writes_x, writes_x_last, writes_padding, writes_padding_last, ignores_stride };

template <Defect defect>
void llama(const nc_call* c) {
  const int64_t stride = defect == Defect::ignores_stride ? c->cols : c->x.row_stride;
  for (int64_t i = 0; i < c->rows; ++i) {
    float sum = 0;
    for (int64_t j = 0; j < c->cols; ++j) {
      const float v = from_16(DType::bf16, static_cast<const uint16_t*>(c->x.data)[i * stride + j]);
      sum += v * v;
    }
    const float r = 1.0f / std::sqrt(sum / static_cast<float>(c->cols) + c->eps);
    for (int64_t j = 0; j < c->cols; ++j) {
      const float x = from_16(DType::bf16, static_cast<const uint16_t*>(c->x.data)[i * stride + j]);
      const float w = c->gamma.data ? at(c->gamma, 0, j) : 1.0f;
      const float y = defect == Defect::rounds_once ? x * r * w : bf16(x * r) * w;
      static_cast<uint16_t*>(c->y.data)[i * stride + j] = bf16_from_float(y);
    }
    if (c->rstd.data) static_cast<float*>(c->rstd.data)[i] = r;
  }
  if (defect == Defect::writes_x) static_cast<uint16_t*>(c->x.data)[0] ^= 1;
  if (defect == Defect::writes_padding && c->rows > 1 && c->x.row_stride > c->cols)
    static_cast<uint16_t*>(c->x.data)[c->cols] = 0;
  // the last element of the last row, and the last element of padding (after the row before it)
  if (defect == Defect::writes_x_last)
    static_cast<uint16_t*>(c->x.data)[(c->rows - 1) * c->x.row_stride + c->cols - 1] ^= 1;
  if (defect == Defect::writes_padding_last && c->rows > 1 && c->x.row_stride > c->cols)
    static_cast<uint16_t*>(c->x.data)[(c->rows - 1) * c->x.row_stride - 1] = 0;
}

Kernel row(SpecKernelFn fn, const OpSpec* spec = &kLlama) {
  return Kernel{.name = "test.llama", .op = op_of(*spec), .origin = Origin::plugin,
                .dtype = spec->dtype_of(TensorName::x), .algorithm = "test", .fn = fn,
                .bound = default_rmsnorm_fwd_bound, .spec = spec, .takes_row_stride = true};
}

Problem strided_problem() {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  Problem p;
  p.rows = 3;
  p.cols = 40;
  p.row_stride = 45;
  p.eps = 1e-6f;
  for (int i = 0; i < p.rows * p.cols; ++i) p.x.push_back(bf16(static_cast<float>(2 * normal(rng))));
  for (int i = 0; i < p.cols; ++i) p.gamma.push_back(bf16(static_cast<float>(1 + 0.3 * normal(rng))));
  return p;
}

TEST(EvaluateSpec, ACorrectKernelOfThePolicyPassesOnStridedRows) {
  const Evaluation ev = evaluate(row(llama<Defect::none>), strided_problem());
  EXPECT_TRUE(ev.declined.empty()) << ev.declined;
  EXPECT_TRUE(ev.pass) << ev.worst.output << "[" << ev.worst.row << ", " << ev.worst.col << "] ratio "
                       << ev.max_error_over_bound;
  EXPECT_EQ(ev.spec, to_text(kLlama));
  EXPECT_GT(ev.exact_math_ulp, 0);  // two roundings: the kernel's y is not the exact value rounded once
  EXPECT_LE(ev.exact_math_ulp, 2);
}

TEST(EvaluateSpec, AKernelOfAnotherPolicyFailsAndNamesIt) {
  Problem p = strided_problem();
  p.rows = 4;  // enough elements for a one-rounding y to differ from Llama's somewhere
  p.x.resize(static_cast<std::size_t>(p.rows * p.cols), 1.25f);
  const Evaluation ev = evaluate(row(llama<Defect::rounds_once>), p);
  ASSERT_FALSE(ev.pass);
  EXPECT_FALSE(ev.wrote_input || ev.out_of_bounds_write || ev.unwritten_output);
  EXPECT_EQ(ev.worst.output, "y");
  const OpSpec once = parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16").spec.value();
  EXPECT_NE(std::find(ev.consistent_policies.begin(), ev.consistent_policies.end(), to_text(once)),
            ev.consistent_policies.end());
}

TEST(EvaluateSpec, WritesIntoAnInputRowAndIntoPaddingAreToldApart) {
  // into x's rows (its first element, its last), or into the padding (its first element, its last)
  for (const auto& [fn, into_input] : {std::pair{&llama<Defect::writes_x>, true}, {&llama<Defect::writes_x_last>, true},
                                       {&llama<Defect::writes_padding>, false},
                                       {&llama<Defect::writes_padding_last>, false}}) {
    const Evaluation ev = evaluate(row(fn), strided_problem());
    EXPECT_EQ(ev.wrote_input, into_input);
    EXPECT_EQ(ev.out_of_bounds_write, !into_input);
  }
  const Evaluation ignores_stride = evaluate(row(llama<Defect::ignores_stride>), strided_problem());
  EXPECT_TRUE(ignores_stride.out_of_bounds_write);  // its y lands in the padding between rows
  EXPECT_FALSE(ignores_stride.pass);
  // the same kernel on contiguous rows is right: the stride is what it ignores
  Problem contiguous = strided_problem();
  contiguous.row_stride = 0;
  EXPECT_TRUE(evaluate(row(llama<Defect::ignores_stride>), contiguous).pass);
}

TEST(EvaluateSpec, WhatTheKernelCannotTakeIsDeclinedWithTheReason) {
  // rows apart, to a kernel that takes contiguous rows only
  Kernel contiguous_only = row(llama<Defect::none>);
  contiguous_only.takes_row_stride = false;
  EXPECT_NE(evaluate(contiguous_only, strided_problem()).declined.find("contiguous rows only"), std::string::npos);
  // a spec that adds a residual, on a problem without one
  static const OpSpec fused = parse_spec("rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16").spec.value();
  EXPECT_NE(evaluate(row(llama<Defect::none>, &fused), strided_problem()).declined.find("has none"),
            std::string::npos);
  // a backward spec evaluate() does not judge (spec_not_judged): declined before any call
  static const OpSpec unjudged_bwd = parse_spec("rmsnorm bwd dtype=bf16 dy=f32").spec.value();
  Problem bwd = strided_problem();
  bwd.row_stride = 0;
  bwd.dy = bwd.x;
  EXPECT_NE(evaluate(row(llama<Defect::none>, &unjudged_bwd), bwd).declined.find("judges no backward spec"),
            std::string::npos);
}

// Apex's all-16-bit LayerNorm in f16: y = f16(f16(gamma f16(xhat)) + beta),
// float32 statistics. doubled_product: the product formed at twice its value
// in f16 and then halved (an f16 intermediate that overflows where the
// policy's does not).
const OpSpec kApexF16 = parse_spec("layernorm fwd dtype=f16 gamma=f16 beta=f16 round=xhat:f16,scaled:f16").spec.value();

template <bool doubled_product>
void apex_f16(const nc_call* c) {
  const auto in = [](const nc_tensor& t, int64_t i, int64_t j) {
    return from_16(DType::f16, static_cast<const uint16_t*>(t.data)[i * t.row_stride + j]);
  };
  const auto f16 = [](float v) { return from_16(DType::f16, to_16(DType::f16, v)); };
  for (int64_t i = 0; i < c->rows; ++i) {
    float sum = 0, var = 0;
    for (int64_t j = 0; j < c->cols; ++j) sum += in(c->x, i, j);
    const float mean = sum / static_cast<float>(c->cols);
    for (int64_t j = 0; j < c->cols; ++j) var += (in(c->x, i, j) - mean) * (in(c->x, i, j) - mean);
    const float rstd = 1.0f / std::sqrt(var / static_cast<float>(c->cols) + c->eps);
    for (int64_t j = 0; j < c->cols; ++j) {
      const float xhat = f16((in(c->x, i, j) - mean) * rstd);
      const float scaled = doubled_product ? f16(2 * in(c->gamma, 0, j) * xhat) / 2 : f16(in(c->gamma, 0, j) * xhat);
      static_cast<uint16_t*>(c->y.data)[i * c->y.row_stride + j] = to_16(DType::f16, scaled + in(c->beta, 0, j));
    }
    static_cast<float*>(c->mean.data)[i] = mean;
    static_cast<float*>(c->rstd.data)[i] = rstd;
  }
}

// Rows x = (-3, -1, 1, 3) (xhat -+1.342, -+0.447) and (-2, -1, 1, 2) (xhat
// -+1.265, -+0.632), gamma 60000 and beta 30000 (f16 values): gamma xhat is
// -+80498 and -+75895 at the ends, past 65504, so the policy's f16 product is
// -+inf and y = -inf where exact math's y = gamma xhat + beta is -50498 and
// -45895, finite. Inside, -+37947 and -+26833 are f16 products, finite.
Problem overflowing_product_problem() {
  Problem p;
  p.rows = 2;
  p.cols = 4;
  p.eps = 1e-5f;
  p.x = {-3, -1, 1, 3, -2, -1, 1, 2};
  p.gamma.assign(4, 60000.0f);
  p.beta.assign(4, 30000.0f);
  return p;
}

Kernel apex_row(SpecKernelFn fn) {
  return Kernel{.name = "test.apex_f16", .op = Op::layernorm_fwd, .origin = Origin::plugin, .dtype = DType::f16,
                .algorithm = "test", .fn = fn, .bound = default_layernorm_fwd_bound, .spec = &kApexF16,
                .takes_row_stride = true};
}

// Shows: a kernel whose rounded product overflows writes the policy's own
// -inf where exact math is finite, and passes (no nan label); the same kernel
// with an f16 intermediate that overflows where the policy's product is finite
// (+-37947 doubled) writes +-inf there and is a non-finite finding.
TEST(EvaluateSpec, AnOverflowingRoundingPointIsThePolicysInfinity) {
  const Problem p = overflowing_product_problem();
  const Evaluation ev = evaluate(apex_row(apex_f16<false>), p);
  ASSERT_TRUE(ev.declined.empty()) << ev.declined;
  EXPECT_FALSE(ev.nonfinite_mismatch);
  EXPECT_TRUE(ev.pass) << ev.worst.output << "[" << ev.worst.row << ", " << ev.worst.col << "] " << ev.worst.computed
                       << " ratio " << ev.max_error_over_bound;

  const Evaluation doubled = evaluate(apex_row(apex_f16<true>), p);
  EXPECT_TRUE(doubled.nonfinite_mismatch);
  EXPECT_FALSE(doubled.pass);
  EXPECT_EQ(doubled.worst.output, "y");
  EXPECT_TRUE(std::isinf(doubled.worst.computed));
  EXPECT_TRUE(std::isfinite(doubled.worst.exact));
}

// vLLM's fused_add_rms_norm in f16 (the stored sum normalized, x r rounded
// before the weight is left out: one rounding at the output). How it meets a
// stored sum past 65504: IEEE arithmetic (rrms = 1/sqrt(inf) = 0, y = +-0 and
// NaN at the infinity), the row-NaN convention (every y and rrms of the row
// NaN), or a sum saturated to 65504 (a finite y that hides the overflow).
enum class SumOverflow { ieee, row_nan, saturates };
const OpSpec kFusedAddF16 = parse_spec("rmsnorm fwd dtype=f16 gamma=f16 add round=sum:f16").spec.value();

template <SumOverflow mode>
void fused_add_f16(const nc_call* c) {
  const auto in = [](const nc_tensor& t, int64_t i, int64_t j) {
    return from_16(DType::f16, static_cast<const uint16_t*>(t.data)[i * t.row_stride + j]);
  };
  for (int64_t i = 0; i < c->rows; ++i) {
    std::vector<float> s(static_cast<std::size_t>(c->cols));
    float squares = 0;
    bool overflow = false;
    for (int64_t j = 0; j < c->cols; ++j) {
      float v = from_16(DType::f16, to_16(DType::f16, in(c->x, i, j) + in(c->residual, i, j)));
      if (mode == SumOverflow::saturates) v = std::clamp(v, -65504.0f, 65504.0f);
      overflow = overflow || std::isinf(v);
      static_cast<uint16_t*>(c->residual_out.data)[i * c->residual_out.row_stride + j] = to_16(DType::f16, v);
      s[static_cast<std::size_t>(j)] = v;
      squares += v * v;
    }
    const bool nan_row = mode == SumOverflow::row_nan && overflow;
    const float r = nan_row ? NAN : 1.0f / std::sqrt(squares / static_cast<float>(c->cols) + c->eps);
    for (int64_t j = 0; j < c->cols; ++j)
      static_cast<uint16_t*>(c->y.data)[i * c->y.row_stride + j] =
          to_16(DType::f16, s[static_cast<std::size_t>(j)] * r * in(c->gamma, 0, j));
    static_cast<float*>(c->rstd.data)[i] = r;
  }
}

Kernel fused_add_row(SpecKernelFn fn) {
  return Kernel{.name = "test.fused_add_f16", .op = Op::rmsnorm_fwd, .origin = Origin::plugin, .dtype = DType::f16,
                .algorithm = "test", .fn = fn, .bound = default_rmsnorm_fwd_bound, .spec = &kFusedAddF16,
                .takes_row_stride = true};
}

// Shows: a stored sum past 65504 (60000 + 60000 in f16) makes the norm's
// input infinite, and that row is judged by the non-finite rule like a row
// whose x holds the infinity: the IEEE evaluation and the row-NaN convention
// both pass, residual_out is held to inf; a kernel that saturates the sum to
// 65504 writes finite values that hide the overflow and fails.
TEST(EvaluateSpec, AStoredSumPastTheRangeIsANonFiniteNormInput) {
  Problem p;
  p.rows = 2;
  p.cols = 4;
  p.eps = 1e-5f;
  p.x = {1, 2, 60000, 3, 1, 2, 3, 4};
  p.residual = {1, 2, 60000, 3, 1, 2, 3, 4};
  p.gamma = {1, 1, 1, 1};
  for (const SpecKernelFn fn : {&fused_add_f16<SumOverflow::ieee>, &fused_add_f16<SumOverflow::row_nan>}) {
    const Evaluation ev = evaluate(fused_add_row(fn), p);
    ASSERT_TRUE(ev.declined.empty()) << ev.declined;
    EXPECT_FALSE(ev.nonfinite_mismatch) << ev.worst.output << "[" << ev.worst.row << ", " << ev.worst.col << "] "
                                        << ev.worst.computed;
    EXPECT_TRUE(ev.pass) << ev.worst.output << "[" << ev.worst.row << ", " << ev.worst.col << "] " << ev.worst.computed
                         << " ratio " << ev.max_error_over_bound;
  }
  const Evaluation saturated = evaluate(fused_add_row(&fused_add_f16<SumOverflow::saturates>), p);
  EXPECT_FALSE(saturated.pass);
  EXPECT_TRUE(saturated.nonfinite_mismatch);  // finite y on the row whose norm input is infinite
}

}  // namespace
}  // namespace normcheck
