// normcheck/op_spec.h: the text form reads back what it writes, each word
// means what docs/ops.md says, a text that is not a spec is refused with the
// word at fault, and the spec of each op of the table names exactly the
// arrays its function takes (call_buffers.h) in their dtypes.
#include "normcheck/op_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "normcheck/call_buffers.h"

namespace normcheck {
namespace {

constexpr Op kOps[] = {Op::layernorm_fwd, Op::layernorm_bwd,        Op::rmsnorm_fwd,
                       Op::rmsnorm_bwd,   Op::layernorm_linear_fwd, Op::rmsnorm_linear_fwd};
constexpr DType kDTypes[] = {DType::f32, DType::bf16, DType::f16};

OpSpec parsed(std::string_view text) {
  const SpecParse p = parse_spec(text);
  EXPECT_TRUE(p.spec) << text << ": " << p.error;
  return p.spec.value_or(OpSpec{});
}

std::string error_of(std::string_view text) {
  const SpecParse p = parse_spec(text);
  EXPECT_FALSE(p.spec) << text << " parsed as " << (p.spec ? to_text(*p.spec) : "");
  return p.error;
}

TEST(OpSpec, TheTableOpsAreTheDefaultsOfTheTextForm) {
  EXPECT_EQ(to_text(spec_of(Op::layernorm_fwd, DType::f32)), "layernorm fwd");
  EXPECT_EQ(to_text(spec_of(Op::rmsnorm_bwd, DType::bf16)), "rmsnorm bwd dtype=bf16");
  EXPECT_EQ(to_text(spec_of(Op::layernorm_linear_fwd, DType::f32)), "layernorm fwd linear");
  for (Op op : kOps)
    for (DType t : kDTypes) {
      if (is_norm_linear(op) && t != DType::f32) continue;  // float32 only (kernel.h)
      const OpSpec s = spec_of(op, t);
      EXPECT_EQ(spec_error(s), "") << to_string(op);
      EXPECT_EQ(parsed(to_text(s)), s) << to_text(s);
      const auto back = table_op(s);
      ASSERT_TRUE(back) << to_text(s);
      EXPECT_EQ(back->first, op);
      EXPECT_EQ(back->second, t);
    }
}

// The names call_buffers() gives the arrays, in the spec's words: the main
// output is y, dx or z; the backward's saved statistics are mean and stat.
std::string spec_word(std::string_view buffer, const OpSpec& s) {
  if (buffer == "out") return s.linear ? "z" : s.direction == Direction::fwd ? "y" : "dx";
  if (buffer == "saved_mean") return "mean";
  if (buffer == "saved_stat" || buffer == "stat") return std::string(to_string(TensorName::stat, s.norm));
  if (buffer == "saved_y") return "y";
  if (buffer == "weight") return "w";
  if (buffer == "bias") return "b";
  return std::string(buffer);
}

TEST(OpSpec, ATableOpsSpecHasExactlyTheArraysItsFunctionTakes) {
  static char storage[16];
  KernelArgs all;  // every pointer set: call_buffers() then lists every array the op takes
  all.rows = 2, all.cols = 3, all.out_features = 4;
  all.x = storage, all.dy = storage, all.out = storage;
  all.gamma = all.beta = all.saved_mean = all.saved_stat = all.saved_y = all.weight = all.bias =
      reinterpret_cast<const float*>(storage);
  all.mean = all.stat = all.dgamma = all.dbeta = reinterpret_cast<float*>(storage);
  constexpr TensorName kAll[] = {TensorName::x,  TensorName::residual, TensorName::gamma, TensorName::beta,
                                 TensorName::dy, TensorName::y, TensorName::residual_out, TensorName::mean,
                                 TensorName::stat, TensorName::dx, TensorName::dgamma, TensorName::dbeta,
                                 TensorName::w,  TensorName::b, TensorName::z};
  // every table op, and each backward's from=y variant (y and beta in place of x and the saved mean)
  std::vector<std::pair<Op, OpSpec>> specs;
  for (Op op : kOps) {
    for (DType t : kDTypes) {
      if (is_norm_linear(op) && t != DType::f32) continue;
      specs.emplace_back(op, spec_of(op, t));
      if (specs.back().second.direction == Direction::fwd) continue;
      specs.emplace_back(op, spec_of(op, t));
      specs.back().second.from_y = true;
    }
  }
  for (const auto& [op, s] : specs) {
    const DType t = s.dtype_of(TensorName::x);
    {
      Kernel k;
      k.name = "k", k.op = op, k.origin = Origin::ours, k.dtype = t, k.spec = &s;
      std::set<std::string> from_calls, from_spec;
      for (const CallBuffer& b : call_buffers(k, all)) {
        from_calls.insert(spec_word(b.name, s));
        // its size is its element count (by shape: rows 2, cols 3, out_features 4) times its dtype's size in the spec
        const std::string word = spec_word(b.name, s);
        const std::size_t elements = word == "x" || word == "dy" || word == "y" || word == "dx" ? 6
                                     : word == "z"                                        ? 8
                                     : word == "mean" || word == "rstd" || word == "rrms" ? 2
                                     : word == "w"                                        ? 12
                                     : word == "b"                                        ? 4
                                                                                          : 3;
        const auto n = std::find_if(std::begin(kAll), std::end(kAll),
                                    [&](TensorName n) { return to_string(n, s.norm) == word; });
        ASSERT_NE(n, std::end(kAll)) << b.name;
        EXPECT_EQ(b.bytes, elements * (s.dtype_of(*n) == DType::f32 ? 4u : 2u))
            << to_text(s) << " " << b.name;
      }
      for (TensorName n : kAll)
        if (s.has(n)) from_spec.insert(std::string(to_string(n, s.norm)));
      EXPECT_EQ(from_calls, from_spec) << to_text(s);
    }
  }
}

// A backward from=y reads y (in the activations' format) and beta, and of
// the statistics rstd / rrms alone.
TEST(OpSpec, ABackwardFromYReadsYAndBetaInPlaceOfXAndTheMean) {
  const OpSpec apex = parsed("layernorm bwd dtype=bf16 from=y");
  EXPECT_TRUE(apex.from_y);
  EXPECT_FALSE(apex.has(TensorName::x));
  EXPECT_FALSE(apex.has(TensorName::mean));
  for (TensorName t : {TensorName::y, TensorName::beta, TensorName::dy, TensorName::gamma, TensorName::stat,
                       TensorName::dx, TensorName::dgamma, TensorName::dbeta})
    EXPECT_TRUE(apex.has(t)) << to_string(t, apex.norm);
  EXPECT_EQ(apex.dtype_of(TensorName::y), DType::bf16);
  EXPECT_EQ(to_text(apex), "layernorm bwd dtype=bf16 from=y");
  const OpSpec rms = parsed("rmsnorm bwd from=y");
  EXPECT_TRUE(rms.has(TensorName::y));
  EXPECT_FALSE(rms.has(TensorName::beta));  // RMSNorm without `bias`: y / gamma
  OpSpec table = spec_of(Op::layernorm_bwd, DType::bf16);
  EXPECT_TRUE(table.has(TensorName::x));
  EXPECT_FALSE(table.has(TensorName::y));
  EXPECT_FALSE(table.has(TensorName::beta));
}

TEST(OpSpec, EachWordSetsWhatItSays) {
  const OpSpec llama = parsed("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16");
  EXPECT_EQ(llama.norm, NormKind::rmsnorm);
  EXPECT_EQ(llama.dtype_of(TensorName::x), DType::bf16);
  EXPECT_EQ(llama.dtype_of(TensorName::y), DType::bf16);
  EXPECT_EQ(llama.dtype_of(TensorName::gamma), DType::bf16);
  EXPECT_EQ(llama.dtype_of(TensorName::stat), DType::f32);  // statistics stay float32 unless named
  EXPECT_EQ(llama.rounding_at(RoundingPoint::xhat), DType::bf16);
  EXPECT_FALSE(llama.rounding_at(RoundingPoint::r));
  EXPECT_FALSE(llama.bias);
  EXPECT_FALSE(llama.has(TensorName::beta));
  EXPECT_FALSE(llama.has(TensorName::mean));

  // a tensor's own word wins over dtype= in either order
  const OpSpec mixed = parsed("layernorm fwd y=f32 dtype=bf16");
  EXPECT_EQ(mixed.dtype_of(TensorName::x), DType::bf16);
  EXPECT_EQ(mixed.dtype_of(TensorName::y), DType::f32);
  EXPECT_EQ(to_text(mixed), "layernorm fwd dtype=bf16 y=f32");

  const OpSpec fused = parsed("rmsnorm fwd add weight=1+gamma dtype=f16 round=sum:f16");
  EXPECT_TRUE(fused.add);
  EXPECT_TRUE(fused.has(TensorName::residual));
  EXPECT_TRUE(fused.has(TensorName::residual_out));
  EXPECT_EQ(fused.dtype_of(TensorName::residual_out), DType::f16);
  EXPECT_EQ(fused.weight, Weight::one_plus_gamma);
  EXPECT_EQ(to_text(fused), "rmsnorm fwd dtype=f16 add weight=1+gamma round=sum:f16");
  EXPECT_FALSE(table_op(fused));  // not an op of the table

  EXPECT_FALSE(parsed("layernorm fwd bias=none").bias);
  EXPECT_TRUE(parsed("rmsnorm fwd bias").has(TensorName::beta));
  EXPECT_EQ(parsed("layernorm bwd rstd=bf16 mean=bf16").dtype_of(TensorName::stat), DType::bf16);
  EXPECT_FALSE(parsed("rmsnorm fwd weight=none").has(TensorName::gamma));
  const OpSpec no_stats = parsed("layernorm bwd stats=none");
  EXPECT_FALSE(no_stats.has(TensorName::mean));
  EXPECT_FALSE(no_stats.has(TensorName::stat));
  EXPECT_EQ(to_text(no_stats), "layernorm bwd stats=none");
  // the canonical text of a spec with every kind of word reads back the same
  const OpSpec every = parsed("layernorm fwd dtype=bf16 gamma=f32 beta=bf16 mean=bf16 rstd=bf16 residual_out=f32 "
                              "add weight=1+gamma round=scaled:bf16,sum:f32,r:bf16,weight:f32,xhat:bf16");
  EXPECT_EQ(to_text(every), "layernorm fwd dtype=bf16 beta=bf16 residual_out=f32 mean=bf16 rstd=bf16 add "
                            "weight=1+gamma round=sum:f32,r:bf16,xhat:bf16,weight:f32,scaled:bf16");
  EXPECT_EQ(parsed(to_text(every)), every);
}

TEST(OpSpec, TheWordsOfAQuantizedYSetItsCast) {
  const OpSpec vllm = parsed("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 quant=e4m3 scale=static");
  ASSERT_TRUE(vllm.quant);
  EXPECT_EQ(vllm.quant->cast, (QuantCast{QuantFormat::e4m3, true, false, false}));
  EXPECT_EQ(vllm.quant->scale, ScaleKind::given);
  EXPECT_EQ(vllm.quant->apply, ScaleApply::inverse);
  EXPECT_FALSE(vllm.quant->nan_clamp);
  EXPECT_FALSE(vllm.quant->amax);
  EXPECT_EQ(vllm.dtype_of(TensorName::y), DType::bf16);  // y's format before the cast
  EXPECT_FALSE(table_op(vllm));
  const OpSpec every = parsed("rmsnorm fwd scale_min=1e-06 quant=int8 qmin=-127 ties=away scale_apply=divide "
                              "scale=block:128 scale_ub=1200 dtype=bf16 y=f32");
  ASSERT_TRUE(every.quant);
  const Quantization& q = *every.quant;
  EXPECT_EQ(q.cast, (QuantCast{QuantFormat::int8, true, true, true}));
  EXPECT_EQ(q.scale, ScaleKind::per_block);
  EXPECT_EQ(q.group, 128);
  EXPECT_EQ(q.apply, ScaleApply::divide);
  EXPECT_EQ(q.scale_ub, 1200.0f);
  EXPECT_EQ(q.scale_min, 1e-6f);
  EXPECT_EQ(scales_per_row(q, 300), 3);
  EXPECT_EQ(to_text(every), "rmsnorm fwd dtype=bf16 y=f32 quant=int8 scale=block:128 scale_apply=divide ties=away "
                            "qmin=-127 scale_ub=1200 scale_min=1e-06");
  EXPECT_EQ(parsed(to_text(every)), every);
  EXPECT_FALSE(parsed("rmsnorm fwd quant=e5m2 scale=token saturate=none").quant->cast.saturate);
  // TransformerEngine's convention: the scale multiplies, scale_inv and amax written; vLLM's NaN clamp
  const OpSpec te = parsed("rmsnorm fwd amax dtype=bf16 y=f32 scale_apply=multiply quant=e4m3 scale=static");
  EXPECT_EQ(te.quant->apply, ScaleApply::multiply);
  EXPECT_TRUE(te.quant->amax);
  EXPECT_EQ(to_text(te), "rmsnorm fwd dtype=bf16 y=f32 quant=e4m3 scale=static scale_apply=multiply amax");
  EXPECT_EQ(parsed(to_text(te)), te);
  const OpSpec clamp = parsed("rmsnorm fwd nan=clamp quant=int8 scale=token");
  EXPECT_TRUE(clamp.quant->nan_clamp);
  EXPECT_EQ(to_text(clamp), "rmsnorm fwd quant=int8 scale=token nan=clamp");
  EXPECT_EQ(parsed(to_text(clamp)), clamp);
}

TEST(OpSpec, ATextThatIsNotASpecIsRefusedWithTheWordAtFault) {
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3").find("names its scale"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd scale=token").find("come with 'quant="), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=fp4 scale=token").find("e4m3, e5m2 or int8"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=block:0").find("positive integer"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=static ties=away").find("int8's"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=int8 scale=static saturate=none").find("fp8's"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=int8 scale=static scale_ub=4").find("dynamic scale"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=int8 scale=token scale_ub=0").find("> 0"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=int8 scale=token scale_min=2 scale_ub=1").find("no scale satisfies"),
            std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd quant=int8 scale=token").find("forward norm"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=token scale_apply=multiply").find("given input"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=static scale_apply=times").find("'multiply'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e5m2 scale=static saturate=none nan=clamp").find("saturating clamp"),
            std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=static nan=zero").find("'nan=clamp'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd quant=e4m3 scale=static amax=row").find("takes no value"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd amax").find("come with 'quant="), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd linear quant=int8 scale=token").find("forward norm"), std::string::npos);
  EXPECT_NE(error_of("").find("starts with the norm"), std::string::npos);
  EXPECT_NE(error_of("groupnorm fwd").find("'groupnorm' is not a norm"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm sideways").find("'sideways' is not a direction"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd dtype=f64").find("'f64' is not a dtype"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd dtype").find("takes a value"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd add=yes").find("takes no value"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd weight=2+gamma").find("none, gamma or 1+gamma"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd dtype=bf16 dtype=f16").find("given twice"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd round=xhat:bf16,xhat:f16").find("given twice"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd round=mu:f32").find("'mu:f32' in 'round=mu:f32'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd round=xhat").find("dtype after ':'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd round=sum:bf16").find("no sum without 'add'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd weight=none round=scaled:bf16").find("no weight"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd round=r:bf16").find("a stage of the forward"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd round=dyw:bf16").find("of the backward"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd weight=none round=dw_row:bf16").find("no weight"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd reduce=block:64:f32").find("over the rows"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd reduce=block:0:f32").find("reduce=block:R:P"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd reduce=rows:64").find("reduce=block:R:P"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd reduce=block:64:f64").find("reduce=block:R:P"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd acc=f64").find("not a dtype"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd linear").find("forward op"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd linear add").find("reads x alone"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd stats=some").find("stats=none"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd linear stats=none").find("no statistics"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd stats=none rrms=bf16").find("no rrms"), std::string::npos);
  // a tensor the op does not have, by the name the norm gives it
  EXPECT_NE(error_of("rmsnorm fwd mean=bf16").find("no mean"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm fwd rstd=bf16").find("'rstd=bf16' is not a word"), std::string::npos);
  EXPECT_NE(error_of("layernorm fwd residual=bf16").find("no residual"), std::string::npos);
  EXPECT_NE(error_of("layernorm bwd beta=bf16").find("no beta"), std::string::npos);
  EXPECT_NE(error_of("layernorm fwd sideways").find("'sideways' is not a word"), std::string::npos);
  EXPECT_NE(error_of("layernorm fwd from=y").find("a backward's word"), std::string::npos);
  EXPECT_NE(error_of("layernorm bwd from=x").find("'from=y'"), std::string::npos);
  EXPECT_NE(error_of("rmsnorm bwd from=y stats=none").find("needs the saved"), std::string::npos);
  EXPECT_NE(error_of("layernorm bwd from=y x=bf16").find("no x"), std::string::npos);
  EXPECT_NE(error_of("layernorm bwd from=y mean=bf16").find("no mean"), std::string::npos);
}

// The backward's words: rounding points, the accumulator and the reduction, canonical in a fixed order.
TEST(OpSpec, BackwardWordsRoundTrip) {
  const OpSpec liger = parsed("rmsnorm bwd dtype=bf16 gamma=bf16 round=dw_row:bf16,xhat:bf16 reduce=block:128:f32");
  EXPECT_EQ(to_text(liger), "rmsnorm bwd dtype=bf16 gamma=bf16 round=xhat:bf16,dw_row:bf16 reduce=block:128:f32");
  EXPECT_EQ(liger.reduce->rows, 128);
  const OpSpec acc = parsed("layernorm bwd dtype=bf16 acc=bf16 round=dyw:bf16");
  EXPECT_EQ(to_text(acc), "layernorm bwd dtype=bf16 round=dyw:bf16 acc=bf16");
  EXPECT_EQ(parsed("layernorm bwd acc=f32"), parsed("layernorm bwd"));  // float32 sums: the default
  for (const OpSpec& s : {liger, acc}) EXPECT_EQ(parsed(to_text(s)), s);
}

// Every example of docs/ops.md's text form is a spec, written canonically.
TEST(OpSpec, TheDocsExamplesAreCanonicalSpecs) {
  std::ifstream doc(NORMCHECK_DOCS_DIR "/ops.md");
  ASSERT_TRUE(doc) << NORMCHECK_DOCS_DIR "/ops.md";
  int examples = 0;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("    layernorm ", 0) != 0 && line.rfind("    rmsnorm ", 0) != 0) continue;
    // the spec, then two spaces or more and the comment
    const std::size_t end = line.find("  ", 4);
    const std::string text = line.substr(4, end == std::string::npos ? std::string::npos : end - 4);
    const SpecParse p = parse_spec(text);
    ASSERT_TRUE(p.spec) << text << ": " << p.error;
    EXPECT_EQ(to_text(*p.spec), text);
    ++examples;
  }
  EXPECT_GE(examples, 9);
}

}  // namespace
}  // namespace normcheck
