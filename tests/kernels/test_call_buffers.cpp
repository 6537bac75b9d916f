// normcheck/call_buffers.h: the named buffers of a call are exactly the
// arrays each op's function takes (kernels/invoke.cpp), with the sizes of its
// shape and dtype, and bind_call_buffer() puts each one back where it came
// from, so a call rebuilt from the descriptors alone is the same call.
#include "normcheck/call_buffers.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace normcheck {
namespace {

Kernel row(Op op, DType dtype) {
  Kernel k;
  k.name = "t", k.op = op, k.origin = Origin::ours, k.dtype = dtype;
  return k;
}

// Every pointer set to a distinct non-null address, so a buffer's data says which member it came from.
KernelArgs all_set() {
  static char storage[16];
  KernelArgs a;
  a.rows = 3;
  a.cols = 5;
  a.out_features = 7;
  a.x = storage + 0, a.dy = storage + 1, a.gamma = reinterpret_cast<const float*>(storage + 2);
  a.beta = reinterpret_cast<const float*>(storage + 3), a.saved_mean = reinterpret_cast<const float*>(storage + 4);
  a.saved_stat = reinterpret_cast<const float*>(storage + 5), a.out = storage + 6;
  a.mean = reinterpret_cast<float*>(storage + 7), a.stat = reinterpret_cast<float*>(storage + 8);
  a.dgamma = reinterpret_cast<float*>(storage + 9), a.dbeta = reinterpret_cast<float*>(storage + 10);
  a.weight = reinterpret_cast<const float*>(storage + 11), a.bias = reinterpret_cast<const float*>(storage + 12);
  return a;
}

std::map<std::string, std::size_t> sizes(Op op, DType dtype) {
  std::map<std::string, std::size_t> out;
  for (const CallBuffer& b : call_buffers(row(op, dtype), all_set())) out[std::string(b.name)] = b.bytes;
  return out;
}

TEST(CallBuffers, EachOpNamesTheArraysItsFunctionTakesWithTheirSizes) {
  // rows 3, cols 5, out_features 7: a row-major array is 15 elements, a per-column one 5, a per-row one 3.
  using M = std::map<std::string, std::size_t>;
  EXPECT_EQ(sizes(Op::layernorm_fwd, DType::f32),
            (M{{"x", 60}, {"out", 60}, {"gamma", 20}, {"beta", 20}, {"mean", 12}, {"stat", 12}}));
  EXPECT_EQ(sizes(Op::layernorm_fwd, DType::bf16),
            (M{{"x", 30}, {"out", 30}, {"gamma", 20}, {"beta", 20}, {"mean", 12}, {"stat", 12}}));
  EXPECT_EQ(sizes(Op::layernorm_bwd, DType::f16),
            (M{{"x", 30}, {"dy", 30}, {"out", 30}, {"gamma", 20}, {"dgamma", 20}, {"dbeta", 20}, {"saved_mean", 12},
               {"saved_stat", 12}}));
  EXPECT_EQ(sizes(Op::rmsnorm_fwd, DType::f32), (M{{"x", 60}, {"out", 60}, {"gamma", 20}, {"stat", 12}}));
  EXPECT_EQ(sizes(Op::rmsnorm_bwd, DType::f32),
            (M{{"x", 60}, {"dy", 60}, {"out", 60}, {"gamma", 20}, {"dgamma", 20}, {"saved_stat", 12}}));
  // z is rows x out_features floats, W out_features x cols, b out_features.
  EXPECT_EQ(sizes(Op::layernorm_linear_fwd, DType::f32),
            (M{{"x", 60}, {"out", 84}, {"gamma", 20}, {"beta", 20}, {"weight", 140}, {"bias", 28}}));
  EXPECT_EQ(sizes(Op::rmsnorm_linear_fwd, DType::f32),
            (M{{"x", 60}, {"out", 84}, {"gamma", 20}, {"weight", 140}, {"bias", 28}}));
}

TEST(CallBuffers, OnlyTheOutputsAreMarkedWritten) {
  for (const CallBuffer& b : call_buffers(row(Op::layernorm_bwd, DType::f32), all_set())) {
    const bool output = b.name == "out" || b.name == "dgamma" || b.name == "dbeta";
    EXPECT_EQ(b.output, output) << b.name;
  }
}

TEST(CallBuffers, NullArraysAreLeftOut) {
  KernelArgs a = all_set();
  a.gamma = nullptr;
  a.mean = nullptr;
  for (const CallBuffer& b : call_buffers(row(Op::layernorm_fwd, DType::f32), a)) {
    EXPECT_NE(b.name, "gamma");
    EXPECT_NE(b.name, "mean");
  }
}

TEST(CallBuffers, BindingEachBufferRebuildsTheCall) {
  for (const Op op : {Op::layernorm_fwd, Op::layernorm_bwd, Op::rmsnorm_fwd, Op::rmsnorm_bwd,
                      Op::layernorm_linear_fwd}) {
    const KernelArgs original = all_set();
    KernelArgs rebuilt;
    for (const CallBuffer& b : call_buffers(row(op, DType::f32), original))
      ASSERT_TRUE(bind_call_buffer(rebuilt, b.name, b.data)) << b.name;
    const auto same = [&](const void* got, const void* want, bool taken) { return got == (taken ? want : nullptr); };
    const bool bwd = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
    const bool ln = op == Op::layernorm_fwd || op == Op::layernorm_bwd || op == Op::layernorm_linear_fwd;
    const bool linear = is_norm_linear(op);
    EXPECT_TRUE(same(rebuilt.x, original.x, true));
    EXPECT_TRUE(same(rebuilt.out, original.out, true));
    EXPECT_TRUE(same(rebuilt.gamma, original.gamma, true));
    EXPECT_TRUE(same(rebuilt.dy, original.dy, bwd));
    EXPECT_TRUE(same(rebuilt.beta, original.beta, ln && !bwd));
    EXPECT_TRUE(same(rebuilt.saved_mean, original.saved_mean, bwd && ln));
    EXPECT_TRUE(same(rebuilt.saved_stat, original.saved_stat, bwd));
    EXPECT_TRUE(same(rebuilt.mean, original.mean, !bwd && !linear && ln));
    EXPECT_TRUE(same(rebuilt.stat, original.stat, !bwd && !linear));
    EXPECT_TRUE(same(rebuilt.dgamma, original.dgamma, bwd));
    EXPECT_TRUE(same(rebuilt.dbeta, original.dbeta, bwd && ln));
    EXPECT_TRUE(same(rebuilt.weight, original.weight, linear));
    EXPECT_TRUE(same(rebuilt.bias, original.bias, linear));
  }
}

TEST(CallBuffers, AnUnknownNameBindsNothing) {
  KernelArgs a;
  EXPECT_FALSE(bind_call_buffer(a, "../x", &a));
  EXPECT_EQ(a.x, nullptr);
}

}  // namespace
}  // namespace normcheck
