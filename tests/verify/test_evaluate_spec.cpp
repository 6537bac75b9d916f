// evaluate() on a kernel with a spec of its own (Kernel::spec, a version-2
// kernel called with tensor descriptors, here in this process): a correct
// kernel of the spec's policy passes on strided rows; a write into an input
// row is writes_input, a write into the padding between rows or an ignored
// stride is out_of_bounds; a kernel of another policy fails and names it;
// what the kernel cannot take is declined with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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
enum class Defect { none, rounds_once, writes_x, writes_padding, ignores_stride };

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
  const Evaluation into_x = evaluate(row(llama<Defect::writes_x>), strided_problem());
  EXPECT_TRUE(into_x.wrote_input);
  EXPECT_FALSE(into_x.out_of_bounds_write);
  const Evaluation into_padding = evaluate(row(llama<Defect::writes_padding>), strided_problem());
  EXPECT_TRUE(into_padding.out_of_bounds_write);
  EXPECT_FALSE(into_padding.wrote_input);
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

}  // namespace
}  // namespace normcheck
