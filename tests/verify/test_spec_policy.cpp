// normcheck/spec_policy.h: float32 kernels written from the public algorithms
// of the projects' norms (each rounding where its project rounds) are within
// their own policy's admissible range on every element, are identified as
// that policy and not as another known one, and a kernel that declares one
// policy but rounds elsewhere, or breaks a stage, is outside its range.
#include "normcheck/spec_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "normcheck/bounds.h"
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "test_seed.h"

namespace normcheck {
namespace {

float bf16(float v) { return float_from_bf16(bf16_from_float(v)); }

OpSpec spec(std::string_view text) {
  const SpecParse p = parse_spec(text);
  EXPECT_TRUE(p.spec) << p.error;
  return p.spec.value_or(OpSpec{});
}

// One problem's stored inputs and a kernel's outputs on it.
struct Case {
  int64_t rows = 0, cols = 0;
  std::vector<float> x, residual, gamma, beta;
  float eps = 1e-6f;
  SpecInputs inputs() const { return {rows, cols, x, residual, gamma, beta, eps, {}}; }
};

using Kernel = std::function<SpecOutputs(const Case&)>;

// bf16 rows: centred, shifted by 100 sigma, and of small scale; weights near 1
// (near 0 for a 1 + gamma weight), bias small.
std::vector<Case> cases(bool add, bool offset_weight, bool bias, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<Case> out;
  for (double shift : {0.0, 100.0})
    for (double scale : {1.0, 1e-3}) {
      Case c;
      c.rows = 3, c.cols = 256;
      for (int i = 0; i < c.rows * c.cols; ++i) {
        c.x.push_back(bf16(static_cast<float>(scale * (shift + normal(rng)))));
        if (add) c.residual.push_back(bf16(static_cast<float>(scale * normal(rng))));
      }
      for (int i = 0; i < c.cols; ++i) {
        c.gamma.push_back(bf16(static_cast<float>((offset_weight ? 0 : 1) + 0.3 * normal(rng))));
        if (bias) c.beta.push_back(bf16(static_cast<float>(0.1 * normal(rng))));
      }
      out.push_back(std::move(c));
    }
  return out;
}

// ---- the kernels, in float32 arithmetic, sequential sums ----

// mean(s^2) and 1/sqrt(mean(s^2) + eps) of one row, as the RMSNorm kernels compute it.
float rrms_of(const float* s, int64_t d, float eps) {
  float sum = 0;
  for (int64_t i = 0; i < d; ++i) sum += s[i] * s[i];
  return 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
}

// How a kernel rounds: which of the stages it rounds to bf16.
struct RmsPolicy {
  bool round_r = false, round_xr = false, offset = false;
  bool add = false, sum_rounded = false;  // with add: normalize bf16(x + res) or the float32 sum
};

Kernel rmsnorm(RmsPolicy p) {
  return [p](const Case& c) {
    SpecOutputs o;
    std::vector<float> s(c.x.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      s[i] = p.add ? c.x[i] + c.residual[i] : c.x[i];
      if (p.add) o.residual_out.push_back(bf16(s[i]));
      if (p.add && p.sum_rounded) s[i] = bf16(s[i]);
    }
    for (int64_t r = 0; r < c.rows; ++r) {
      const float* row = s.data() + r * c.cols;
      float rr = rrms_of(row, c.cols, c.eps);
      if (p.round_r) rr = bf16(rr);
      o.stat.push_back(rr);
      for (int64_t i = 0; i < c.cols; ++i) {
        float xr = row[i] * rr;
        if (p.round_xr) xr = bf16(xr);
        const float w = p.offset ? 1.0f + c.gamma[i] : c.gamma[i];
        o.y.push_back(bf16(xr * w));
      }
    }
    return o;
  };
}

// LayerNorm, two-pass float32 statistics; Apex rounds xhat and gamma xhat to bf16.
Kernel layernorm(bool apex, bool one_pass_variance = false) {
  return [apex, one_pass_variance](const Case& c) {
    SpecOutputs o;
    for (int64_t r = 0; r < c.rows; ++r) {
      const float* x = c.x.data() + r * c.cols;
      float sum = 0, sum_sq = 0;
      for (int64_t i = 0; i < c.cols; ++i) sum += x[i], sum_sq += x[i] * x[i];
      const float mean = sum / static_cast<float>(c.cols);
      float var = 0;
      if (one_pass_variance) {
        var = sum_sq / static_cast<float>(c.cols) - mean * mean;
      } else {
        for (int64_t i = 0; i < c.cols; ++i) var += (x[i] - mean) * (x[i] - mean);
        var /= static_cast<float>(c.cols);
      }
      const float rstd = 1.0f / std::sqrt(var + c.eps);
      o.mean.push_back(mean);
      o.stat.push_back(rstd);
      for (int64_t i = 0; i < c.cols; ++i) {
        float xhat = (x[i] - mean) * rstd;
        if (apex) xhat = bf16(xhat);
        float scaled = c.gamma[i] * xhat;
        if (apex) scaled = bf16(scaled);
        o.y.push_back(bf16(scaled + c.beta[i]));
      }
    }
    return o;
  };
}

struct Identified {
  std::vector<std::string> consistent_known;  // names of the known policies that admit the outputs
  bool declared_consistent = false;
};

Identified identify(const OpSpec& declared, const std::vector<Case>& problems, const Kernel& kernel) {
  std::vector<SpecInputs> in;
  std::vector<SpecOutputs> out;
  for (const Case& c : problems) {
    in.push_back(c.inputs());
    out.push_back(kernel(c));
  }
  Identified id;
  for (const PolicyMatch& m : identify_fwd(declared, in, out)) {
    EXPECT_GT(m.check.checked, 0);
    if (m.policy == declared) id.declared_consistent = m.consistent();
    if (m.consistent() && !known_policy_name(m.policy).empty())
      id.consistent_known.push_back(std::string(known_policy_name(m.policy)));
  }
  return id;
}

PolicyCheck check(const OpSpec& s, const std::vector<Case>& problems, const Kernel& kernel) {
  PolicyCheck total;
  for (const Case& c : problems) {
    const PolicyCheck one = check_policy(s, spec_admissible_fwd(s, c.inputs()), kernel(c));
    if (total.outside == 0 && one.outside) total = one;
    else total.outside += one.outside;
    total.checked += one.checked;
  }
  return total;
}

TEST(SpecPolicy, EachProjectsRmsNormIsIdentifiedAsItsOwnPolicy) {
  const uint64_t seed = test::test_seed();
  const std::vector<Case> plain = cases(false, false, false, seed), offset = cases(false, true, false, seed);
  struct Expect {
    const char* spec;
    RmsPolicy policy;
    bool offset;
    const char* name;  // the part of its known name that says which it is
  } expected[] = {
      {"rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16", {.round_xr = true}, false, "LlamaRMSNorm"},
      {"rmsnorm fwd dtype=bf16 gamma=bf16", {}, false, "one rounding"},
      {"rmsnorm fwd dtype=bf16 gamma=bf16 round=r:bf16,xhat:bf16", {.round_r = true, .round_xr = true}, false,
       "DeepSpeed"},
      {"rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma", {.offset = true}, true, "one rounding"},
  };
  for (const Expect& e : expected) {
    SCOPED_TRACE(e.spec);
    const OpSpec declared = spec(e.spec);
    const std::vector<Case>& problems = e.offset ? offset : plain;
    const PolicyCheck own = check(declared, problems, rmsnorm(e.policy));
    EXPECT_EQ(own.outside, 0) << own.first_output << "[" << own.first_index << "] = " << own.first_value
                              << " outside [" << own.first_lo << ", " << own.first_hi << "]";
    const Identified id = identify(declared, problems, rmsnorm(e.policy));
    EXPECT_TRUE(id.declared_consistent);
    ASSERT_EQ(id.consistent_known.size(), 1u) << "consistent with several known policies";
    EXPECT_NE(id.consistent_known[0].find(e.name), std::string::npos) << id.consistent_known[0];
  }
}

TEST(SpecPolicy, AKernelThatRoundsElsewhereThanItDeclaresIsOutside) {
  const std::vector<Case> problems = cases(false, false, false, test::test_seed());
  // declares Llama's policy, computes Gemma's (one rounding), and the reverse
  const PolicyCheck a = check(spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16"), problems, rmsnorm({}));
  EXPECT_GT(a.outside, 0);
  EXPECT_EQ(a.first_output, "y");
  const PolicyCheck b = check(spec("rmsnorm fwd dtype=bf16 gamma=bf16"), problems, rmsnorm({.round_xr = true}));
  EXPECT_GT(b.outside, 0);
  // declares DeepSpeed's (r rounded) and does not round r: the stored rrms and y show it
  const PolicyCheck c =
      check(spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=r:bf16,xhat:bf16"), problems, rmsnorm({.round_xr = true}));
  EXPECT_GT(c.outside, 0);
}

TEST(SpecPolicy, AFusedAddIsIdentifiedByTheSumItNormalizes) {
  const std::vector<Case> problems = cases(true, false, false, test::test_seed());
  const OpSpec vllm = spec("rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16");
  const OpSpec flashinfer = spec("rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:f32");
  const Kernel reads_stored = rmsnorm({.round_xr = true, .add = true, .sum_rounded = true});
  const Kernel reads_float = rmsnorm({.add = true});
  EXPECT_EQ(check(vllm, problems, reads_stored).outside, 0);
  EXPECT_EQ(check(flashinfer, problems, reads_float).outside, 0);
  const Identified v = identify(vllm, problems, reads_stored);
  ASSERT_EQ(v.consistent_known.size(), 1u);
  EXPECT_NE(v.consistent_known[0].find("vLLM"), std::string::npos);
  const Identified f = identify(flashinfer, problems, reads_float);
  ASSERT_EQ(f.consistent_known.size(), 1u);
  EXPECT_NE(f.consistent_known[0].find("FlashInfer"), std::string::npos);
  // the norm reads the other sum than declared
  EXPECT_GT(check(vllm, problems, rmsnorm({.round_xr = true, .add = true})).outside, 0);
  // a stored sum truncated instead of rounded to nearest even
  const Kernel truncates = [&](const Case& c) {
    SpecOutputs o = reads_stored(c);
    for (std::size_t i = 0; i < o.residual_out.size(); ++i)
      o.residual_out[i] = float_from_bf16(static_cast<uint16_t>(std::bit_cast<uint32_t>(c.x[i] + c.residual[i]) >> 16));
    return o;
  };
  const PolicyCheck t = check(vllm, problems, truncates);
  EXPECT_GT(t.outside, 0);
  EXPECT_EQ(t.first_output, "residual_out");
}

// A row whose stored sum rounds alike from the exact sum and from its
// float32 sum is held to a y range: on bf16 rows every element's sum is exact
// in double, so every row is held to one, midpoints of bf16 included (the sum
// of two bf16 values is often one). A control: a y off by one bf16 value on a
// row is caught there.
TEST(SpecPolicy, AStoredSumRowIsHeldToAYRangeWhenItsSumIsExact) {
  const std::vector<Case> problems = cases(true, false, false, test::test_seed());
  const OpSpec vllm = spec("rmsnorm fwd dtype=bf16 gamma=bf16 add round=sum:bf16,xhat:bf16");
  int64_t rows = 0, rows_with_a_midpoint = 0;
  for (const Case& c : problems) {
    const SpecAdmissible a = spec_admissible_fwd(vllm, c.inputs());
    for (int64_t r = 0; r < c.rows; ++r) {
      ++rows;
      bool midpoint = false;
      for (int64_t j = 0; j < c.cols; ++j) {
        const auto i = static_cast<std::size_t>(r * c.cols + j);
        EXPECT_TRUE(std::isfinite(a.y.lo[i]) && std::isfinite(a.y.hi[i])) << "row " << r << " col " << j;
        midpoint = midpoint || on_midpoint(DType::bf16, static_cast<double>(c.x[i]) + c.residual[i]);
      }
      rows_with_a_midpoint += midpoint;
    }
  }
  EXPECT_GT(rows_with_a_midpoint, rows / 2) << "the rows this test is about: sums on a bf16 midpoint";
  const Kernel reads_stored = rmsnorm({.round_xr = true, .add = true, .sum_rounded = true});
  const Kernel one_off = [&](const Case& c) {
    SpecOutputs o = reads_stored(c);
    o.y[0] = o.y[0] + spacing(DType::bf16, o.y[0]) * (o.y[0] < 0 ? -1 : 1);
    return o;
  };
  EXPECT_EQ(check(vllm, problems, reads_stored).outside, 0);
  const PolicyCheck caught = check(vllm, problems, one_off);
  EXPECT_GT(caught.outside, 0);
  EXPECT_EQ(caught.first_output, "y");
}

TEST(SpecPolicy, LayerNormPoliciesAndAOnePassVariance) {
  const std::vector<Case> problems = cases(false, false, true, test::test_seed());
  const OpSpec apex = spec("layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 round=xhat:bf16,scaled:bf16");
  const OpSpec once = spec("layernorm fwd dtype=bf16 gamma=bf16 beta=bf16");
  EXPECT_EQ(check(apex, problems, layernorm(true)).outside, 0);
  EXPECT_EQ(check(once, problems, layernorm(false)).outside, 0);
  EXPECT_GT(check(apex, problems, layernorm(false)).outside, 0);
  EXPECT_GT(check(once, problems, layernorm(true)).outside, 0);
  const Identified a = identify(apex, problems, layernorm(true));
  ASSERT_EQ(a.consistent_known.size(), 1u);
  EXPECT_NE(a.consistent_known[0].find("Apex"), std::string::npos);
  // E[x^2] - mean^2 on rows shifted by 100 sigma: caught under either policy
  const PolicyCheck bad = check(once, problems, layernorm(false, true));
  EXPECT_GT(bad.outside, 0);
}

// float32 x shifted by 3000 sigma, y in bf16: the two-pass kernel's xhat is
// off by about kappa u = 3000 * 2^-24 = 1.8e-4, a twentieth of bf16's spacing
// at 1, so its rounding at `xhat` often lands on the other side of a
// midpoint than the exact xhat's. The range admits it: it is as wide as the
// default bound's xhat error (about kappa d u there) makes it.
TEST(SpecPolicy, TheRangeAdmitsTheFloatErrorOfACorrectKernel) {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  Case c;
  c.rows = 4, c.cols = 512, c.eps = 1e-5f;
  for (int i = 0; i < c.rows * c.cols; ++i) c.x.push_back(static_cast<float>(3000 + normal(rng)));
  for (int i = 0; i < c.cols; ++i) {
    c.gamma.push_back(bf16(static_cast<float>(1 + 0.3 * normal(rng))));
    c.beta.push_back(bf16(static_cast<float>(0.1 * normal(rng))));
  }
  const OpSpec apex = spec("layernorm fwd y=bf16 gamma=bf16 beta=bf16 round=xhat:bf16,scaled:bf16");
  const SpecAdmissible a = spec_admissible_fwd(apex, c.inputs());
  const SpecOutputs out = layernorm(true)(c);
  const SpecForwardReference exact = spec_reference_fwd(apex, c.inputs(), SpecResult::policy);
  int off_policy = 0;
  for (std::size_t i = 0; i < out.y.size(); ++i) {
    EXPECT_TRUE(a.y.admits(i, out.y[i])) << i;
    off_policy += out.y[i] != exact.y.rounded[i];  // where the kernel is not the policy's exact result
  }
  EXPECT_GT(off_policy, static_cast<int>(out.y.size()) / 10) << "the rows do not exercise the float allowance";
  std::cout << off_policy << " of " << out.y.size() << " elements are not the policy's exact result\n";
}

// Where the default bound is tight against bf16's spacing (centred rows,
// d = 256: xhat within about d u = 1.5e-5 of exact, bf16's spacing at 1 is
// 2^-7), the range is the policy's own result alone on almost every element:
// the check is as tight as the policy, not a tolerance.
TEST(SpecPolicy, OnCentredRowsTheRangeIsThePolicysResultAlone) {
  const std::vector<Case> problems = cases(false, false, false, test::test_seed());
  const OpSpec llama = spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16");
  std::size_t single = 0, total = 0;
  for (const Case& c : problems) {
    const SpecAdmissible a = spec_admissible_fwd(llama, c.inputs());
    const SpecForwardReference exact = spec_reference_fwd(llama, c.inputs(), SpecResult::policy);
    for (std::size_t i = 0; i < a.y.lo.size(); ++i, ++total) {
      EXPECT_TRUE(a.y.admits(i, exact.y.rounded[i]));  // the policy's exact result is admitted
      single += a.y.lo[i] == a.y.hi[i];
    }
  }
  std::cout << single << " of " << total << " ranges hold one value\n";
  EXPECT_GT(single, total * 95 / 100);
}

// A spec with no rounding point but `sum` (the textbook kernel's) has y's
// range around exact math: [RN(lo'), RN(hi')] with lo', hi' = y -+ a
// (y_allowance, evaluate.h) widened by 2^-45 relative (spec_policy.cpp's
// header), rounded to y's format; the whole line where the allowance is not
// finite, the IEEE value itself where exact math's y is non-finite. Written
// out here element by element against the ranges admissible_from computes in
// vectors, bit for bit, on rows whose ends reach every case of the rounding:
// normal values, subnormals and zero (a tiny gamma), values past the
// format's range (a huge gamma), beta cancelling gamma xhat, a zero gamma,
// and an infinite gamma (a non-finite y).
TEST(SpecPolicy, TheTextbookRangeIsTheAllowanceAroundExactMathRounded) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const auto widened = [](double v, double dir) { return std::isinf(v) ? v : v + dir * std::fabs(v) * 0x1p-45; };
  for (const char* text : {"layernorm fwd y=f32", "layernorm fwd y=bf16 gamma=bf16 beta=bf16",
                           "layernorm fwd dtype=f16", "rmsnorm fwd y=bf16", "rmsnorm fwd dtype=f16 weight=none"}) {
    const OpSpec s = spec(text);
    const DType y_t = s.dtype_of(TensorName::y);
    const bool layer = s.norm == NormKind::layernorm;
    Case c;
    c.rows = 6, c.cols = 67;  // not a multiple of any vector width
    for (int i = 0; i < c.rows * c.cols; ++i)
      c.x.push_back(static_cast<float>(round_to_format(s.dtype_of(TensorName::x), 1 + normal(rng))));
    const double tiny = y_t == DType::f16 ? 0x1p-20 : 0x1p-135;
    for (int j = 0; j < c.cols; ++j) {
      double g = 1 + 0.3 * normal(rng);
      if (j % 7 == 1) g *= tiny;
      if (j % 7 == 2) g = largest_finite(y_t == DType::f16 ? DType::f16 : DType::bf16);  // |y| past it where |xhat| > 1
      if (j % 7 == 3) g = 0;
      if (s.weight != Weight::none) {
        const float stored = static_cast<float>(round_to_format(s.dtype_of(TensorName::gamma), j == 5 ? kInf : g));
        c.gamma.push_back(stored);
      }
      if (s.bias) {
        // beta 0 beside a tiny or zero gamma (ends near 0), -gamma (1 + 2^-10) where y cancels near xhat = 1
        const double b = j % 7 == 1 || j % 7 == 3               ? 0.0
                         : j % 7 == 4 && !c.gamma.empty() ? -c.gamma.back() * (1 + 0x1p-10)
                                                                : 0.1 * normal(rng);
        c.beta.push_back(static_cast<float>(round_to_format(s.dtype_of(TensorName::beta), b)));
      }
    }
    const SpecInputs in = c.inputs();
    const SpecAdmissible a = spec_admissible_fwd(s, in);
    const SpecForwardReference ref = spec_reference_fwd(s, in, SpecResult::exact_math);
    const BoundFn bound = default_bound(layer ? Op::layernorm_fwd : Op::rmsnorm_fwd);
    int normal_ends = 0, small_ends = 0, past_ends = 0;
    for (int64_t row = 0; row < c.rows; ++row) {
      const auto r = static_cast<std::size_t>(row);
      const Bound b = bound(ref.condition[r]);
      for (int64_t j = 0; j < c.cols; ++j) {
        const std::size_t i = r * static_cast<std::size_t>(c.cols) + static_cast<std::size_t>(j);
        const double e = ref.y.exact[i];
        double lo = ref.y.rounded[i], hi = ref.y.rounded[i];
        if (std::isfinite(e)) {
          const double w = c.gamma.empty() ? 1.0 : c.gamma[static_cast<std::size_t>(j)];
          const double beta = c.beta.empty() ? 0.0 : c.beta[static_cast<std::size_t>(j)];
          const double allowance = y_allowance(b, w, beta, ref.xhat[i]);
          lo = -kInf, hi = kInf;
          if (std::isfinite(allowance)) {
            lo = round_to_format(y_t, widened(e - allowance, -1));
            hi = round_to_format(y_t, widened(e + allowance, 1));
          }
        }
        for (double end : {lo, hi}) {
          if (!std::isfinite(e)) break;
          const double m = std::fabs(end);
          int& count = m < float_format(y_t).smallest_normal() ? small_ends
                       : m > largest_finite(y_t)                   ? past_ends
                                                                   : normal_ends;
          ++count;
        }
        EXPECT_EQ(std::bit_cast<uint64_t>(a.y.lo[i]), std::bit_cast<uint64_t>(lo))
            << text << " [" << row << ", " << j << "]: " << a.y.lo[i] << " against " << lo << " (seed " << seed << ")";
        EXPECT_EQ(std::bit_cast<uint64_t>(a.y.hi[i]), std::bit_cast<uint64_t>(hi))
            << text << " [" << row << ", " << j << "]: " << a.y.hi[i] << " against " << hi << " (seed " << seed << ")";
      }
    }
    // of a finite y, most ends are normal values (the vector path), and the others are met
    EXPECT_GT(normal_ends, c.rows * c.cols) << text;
    if (s.weight != Weight::none) {
      EXPECT_GE(small_ends, c.rows * 4) << text;
      EXPECT_GE(past_ends, c.rows) << text;
    }
  }
}

TEST(SpecPolicy, ThePoliciesTriedAreTheDistinctRoundingsOfTheActivationFormat) {
  EXPECT_EQ(candidate_policies(spec("rmsnorm fwd")).size(), 1u);  // float32: the spec itself
  // r and xhat, each rounded or not (gamma xhat rounded to bf16 is y itself without beta)
  EXPECT_EQ(candidate_policies(spec("rmsnorm fwd dtype=bf16")).size(), 4u);
  // with beta (or y in float32) gamma xhat's rounding is a policy of its own
  EXPECT_EQ(candidate_policies(spec("rmsnorm fwd dtype=bf16 bias")).size(), 8u);
  EXPECT_EQ(candidate_policies(spec("rmsnorm fwd dtype=bf16 y=f32")).size(), 8u);
  // with 1 + gamma the weight's rounding too; with add, the sum three ways
  EXPECT_EQ(candidate_policies(spec("rmsnorm fwd dtype=bf16 weight=1+gamma add")).size(), 24u);
  for (const OpSpec& s : candidate_policies(spec("layernorm fwd dtype=f16 add weight=1+gamma")))
    EXPECT_EQ(spec_error(s), "") << to_text(s);
}

// A backward spec's candidates: xhat and dyw rounded to x's format or not,
// dw_row to x's or dgamma's, every sum in float32 or x's format, and with a
// reduction its partials in float32, x's or dgamma's format: the product of
// each choice's options, each a valid spec, the declared one among them.
TEST(SpecPolicy, TheBackwardPoliciesTriedAreItsRoundingsAndSumsIn16Bits) {
  struct Expect {
    const char* spec;
    std::size_t count;
  } expected[] = {
      {"rmsnorm bwd", 1},                                           // float32: the spec itself
      {"layernorm bwd reduce=block:32:f32", 1},                     // float32 partials too
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 weight=1+gamma", 16},  // xhat, dyw, dw_row, acc
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 reduce=block:64:f32",
       32},                                                         // and the partial, float32 or bf16
      {"rmsnorm bwd dtype=bf16 dgamma=f16 reduce=block:64:bf16", 72},  // dw_row and the partial 3 ways: 2 2 3 2 3
      {"layernorm bwd dgamma=bf16 reduce=block:32:f32", 4},         // float32 with a bf16 dgamma: dw_row, partial
      {"rmsnorm bwd dtype=bf16 weight=none", 4},                    // no dy w, no dgamma: xhat and acc
  };
  for (const Expect& e : expected) {
    SCOPED_TRACE(e.spec);
    const OpSpec declared = spec(e.spec);
    const std::vector<OpSpec> candidates = candidate_policies(declared);
    EXPECT_EQ(candidates.size(), e.count);
    EXPECT_EQ(std::count(candidates.begin(), candidates.end(), declared), 1);
    for (const OpSpec& c : candidates) EXPECT_EQ(spec_error(c), "") << to_text(c);
  }
}

// Backward policies nest by their words (each only widens the allowances):
// one that rounds, sums or stores partials in 16 bits wherever another does
// holds it; another format at a point, another interface, or a forward
// policy does not.
TEST(SpecPolicy, ABackwardPolicyIsWithinThoseThatAddWordsToIt) {
  const OpSpec plain = spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=f16 reduce=block:64:f32");
  const OpSpec llama = spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=f16 round=xhat:bf16,dyw:bf16,dw_row:bf16 reduce=block:64:f32");
  const OpSpec llama_acc = spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=f16 round=xhat:bf16,dyw:bf16,dw_row:bf16 acc=bf16 reduce=block:64:bf16");
  const OpSpec term_in_f16 = spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=f16 round=xhat:bf16,dyw:bf16,dw_row:f16 reduce=block:64:f32");
  EXPECT_TRUE(policy_within(plain, llama));
  EXPECT_TRUE(policy_within(llama, llama_acc));
  EXPECT_TRUE(policy_within(plain, plain));
  EXPECT_FALSE(policy_within(llama, plain));
  EXPECT_FALSE(policy_within(llama, term_in_f16));  // dw_row in another format
  EXPECT_FALSE(policy_within(plain, spec("rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=f16 reduce=block:32:f32")));
  EXPECT_FALSE(policy_within(spec("rmsnorm fwd dtype=bf16"), spec("rmsnorm fwd dtype=bf16 round=xhat:bf16")));
  // within every candidate of its spec that adds words, as the candidates are built
  for (const OpSpec& c : candidate_policies(plain)) EXPECT_TRUE(policy_within(plain, c)) << to_text(c);
}

// The backward policies of the training examples (examples/plugin/v2_backward.h,
// V2_SPEC_*) are named after the projects that ship them; the same policy
// with a sum in bf16 is not theirs, nor is a forward's name given to a backward.
TEST(SpecPolicy, ShippedBackwardPoliciesHaveTheirProjectsNames) {
  struct Expect {
    const char* spec;
    const char* name;  // a part of its name; "" for none
  } expected[] = {
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 reduce=block:64:f32",
       "Liger-Kernel RMSNorm backward, llama mode"},
      {"layernorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 dbeta=bf16 reduce=block:32:f32", "Apex LayerNorm backward"},
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 add reduce=block:64:f32", "flash-attention's fused add"},
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 weight=1+gamma", "gemma mode"},
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 acc=bf16", ""},
      {"layernorm bwd dtype=bf16 gamma=bf16 reduce=block:32:bf16", ""},
      {"rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16", ""},
  };
  for (const Expect& e : expected) {
    SCOPED_TRACE(e.spec);
    const std::string_view name = known_policy_name(spec(e.spec));
    if (*e.name == 0) EXPECT_EQ(name, "");
    else EXPECT_NE(name.find(e.name), std::string_view::npos) << name;
  }
}

// A quantized y (spec_policy.h): the codes a float32 kernel of the policy may
// write are the correctly rounded code of its value range, and a neighbour
// only where a rounding boundary lies within that range. On centred float32
// rows of d = 256 the upstream error is a few float32 ulps, so two codes are
// admitted only within 2^-12 relative of a boundary, and nearly every
// element admits one code. Measured with NORMCHECK_SEED=20240601: 99.90% one
// code (e4m3) and 99.95% (int8).
TEST(SpecPolicy, AQuantizedYAdmitsANeighbourOnlyNearABoundary) {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  for (const char* text : {"rmsnorm fwd quant=e4m3 scale=static", "layernorm fwd quant=int8 scale=static"}) {
    const OpSpec quantized = parse_spec(text).spec.value();
    const Quantization& q = *quantized.quant;
    int64_t one = 0, two = 0;
    for (int trial = 0; trial < 8; ++trial) {
      const int64_t d = 256;
      std::vector<float> x(d), gamma(d), beta(quantized.bias ? d : 0);
      for (auto& v : x) v = static_cast<float>(normal(rng));
      for (auto& v : gamma) v = static_cast<float>(1 + 0.2 * normal(rng));
      for (auto& v : beta) v = static_cast<float>(0.1 * normal(rng));
      const float scale[] = {static_cast<float>(4.0 / quant_max(q.cast.format) * (1 + 0.1 * normal(rng)))};
      SpecInputs in{1, d, x, {}, gamma, beta, 0, scale};
      const SpecAdmissible a = spec_admissible_fwd(quantized, in);
      const SpecForwardReference exact = spec_reference_fwd(quantized, in, SpecResult::exact_math);
      for (int64_t i = 0; i < d; ++i) {
        const double lo = a.y.lo[i], hi = a.y.hi[i];
        const double span = quant_position(q.cast.format, hi) - quant_position(q.cast.format, lo);
        ASSERT_LE(span, 1) << text << " element " << i;
        if (span == 0) {
          ++one;
          continue;
        }
        ++two;
        // the boundary between the two codes, and the exact t
        const double boundary = (lo + hi) / 2, t = exact.y.exact[i] / scale[0];
        EXPECT_LE(std::fabs(t - boundary), 0x1p-12 * std::fabs(t)) << text << " element " << i;
      }
    }
    const double share = static_cast<double>(one) / static_cast<double>(one + two);
    std::cout << text << ": " << 100 * share << "% of elements admit one code\n";
    EXPECT_GE(share, 0.99);
  }
}


// A candidate explains a departure only where its range pins the outputs
// (PolicyMatch::explains): at an element the declared range [0.99, 1.01]
// does not admit, a candidate whose range there is [1, +inf] (an r rounded
// past its format's largest value: nothing promised beyond 1) admits 15616
// by promising nothing, which is vacuous; one whose range is bounded and
// admits it explains it. The count is of elements outside the declared range
// only: an unbounded range where the declared one admits the value is not.
TEST(SpecPolicy, ACandidateAdmittingByAnUnboundedRangeExplainsNothing) {
  const OpSpec f16 = spec("rmsnorm fwd dtype=f16");
  const auto ranges = [](std::vector<double> lo, std::vector<double> hi) {
    SpecAdmissible a;
    a.y.lo = std::move(lo);
    a.y.hi = std::move(hi);
    return a;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  const SpecAdmissible declared = ranges({0.99, 0.5}, {1.01, 0.6});
  const SpecOutputs outputs{{15616, 0.55}, {}, {}, {}, {}};
  const PolicyCheck vacuous = check_policy(f16, ranges({1, 0.5}, {inf, inf}), outputs, &declared);
  EXPECT_EQ(vacuous.outside, 0);
  EXPECT_EQ(vacuous.vacuous, 1) << "only the element the declared range does not admit";
  EXPECT_FALSE((PolicyMatch{f16, vacuous}.explains()));
  EXPECT_TRUE((PolicyMatch{f16, vacuous}.consistent()));
  const PolicyCheck bounded = check_policy(f16, ranges({15000, 0.5}, {16000, 0.6}), outputs, &declared);
  EXPECT_EQ(bounded.vacuous, 0);
  EXPECT_TRUE((PolicyMatch{f16, bounded}.explains()));
  EXPECT_EQ(check_policy(f16, ranges({1, 0.5}, {inf, inf}), outputs).vacuous, 0) << "no declared ranges given";
}

// A statistic stored before or after a rounding point at f16 (round=r:f16):
// a value of [lo, hi] is admitted when it lies before the rounding, in
// [before_lo, before_hi], or is an f16 value; a float32 value between the two
// that is neither (a Welford error in rstd) is not.
TEST(SpecPolicy, ARoundedStatisticIsAValueOfItsFormatOrTheUnroundedOne) {
  AdmissibleRange stat;
  stat.lo = {0.4995};
  stat.hi = {0.50049};
  stat.grid = DType::f16;
  stat.before_lo = {0.49998};
  stat.before_hi = {0.50002};
  EXPECT_TRUE(stat.admits(0, 0.5f));                     // an f16 value, and unrounded
  EXPECT_TRUE(stat.admits(0, 0.50001f));                 // unrounded
  EXPECT_TRUE(stat.admits(0, 0.5 - 0x1p-12));            // an f16 value below 0.5 in the range
  EXPECT_FALSE(stat.admits(0, 0.5003f));                 // neither: f16's spacing at 0.5 is 2^-11
  EXPECT_FALSE(stat.admits(0, 0.4996f));
  const auto [lo, hi] = stat.ends_for(0, 0.5003f);
  EXPECT_EQ(lo, 0.49998);
  EXPECT_EQ(hi, 0.50002);
  // the policy's own ranges: round=r:f16 gives its statistic a grid and the unrounded range
  Case c;
  c.rows = 1, c.cols = 64;
  std::mt19937_64 rng(test::fixed_seed(2044));
  std::normal_distribution<double> normal;
  for (int i = 0; i < 64; ++i) c.x.push_back(static_cast<float>(normal(rng)));
  const SpecAdmissible a = spec_admissible_fwd(spec("rmsnorm fwd round=r:f16"), c.inputs());
  ASSERT_TRUE(a.stat.grid.has_value());
  EXPECT_EQ(*a.stat.grid, DType::f16);
  EXPECT_LE(a.stat.lo[0], a.stat.before_lo[0]);
  EXPECT_GE(a.stat.hi[0], a.stat.before_hi[0]);
  EXPECT_FALSE(spec_admissible_fwd(spec("rmsnorm fwd"), c.inputs()).stat.grid.has_value());
}

// The three ways to apply a scale, each one float32 operation (two for the
// inverse) evaluated exactly: at s = 3, y = 1, fl32(1 / 3) = 0x1.555556p-2
// is above 1/3, so y fl32(1 / s) and fl32(y / s) part in their last bit.
TEST(SpecPolicy, TheScaleIsAppliedAsDeclared) {
  Quantization q;
  EXPECT_EQ(quant_t(q, 1, 3), 0x1.555556p-2);
  q.apply = ScaleApply::divide;
  EXPECT_EQ(quant_t(q, 1, 3), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(exact_quant_t(q, 1, 3), 1.0 / 3);
  EXPECT_EQ(dequantized(q, 2, 3), 6);
  q.apply = ScaleApply::multiply;
  EXPECT_EQ(quant_t(q, 0x1.000002p0, 0x1.000002p0), static_cast<double>(0x1.000002p0f * 0x1.000002p0f));
  EXPECT_EQ(exact_quant_t(q, 2, 3), 6);
  EXPECT_EQ(dequantized(q, 6, 3), 2);
  // a multiplying scale has no inverse to overflow; the inverse of 2^-129 does
  EXPECT_TRUE(scale_judged(q, 0x1p-129));
  EXPECT_FALSE(scale_judged(Quantization{}, 0x1p-129));
  EXPECT_FALSE(scale_judged(q, NAN));
}

// nan=clamp's codes: vLLM's fmaxf(-448, fminf(NaN, 448)) = 448, and int8's
// cvt.rni.sat NaN -> 0; an infinite t clamps to the ends. None without it.
TEST(SpecPolicy, TheCodesOfANonFiniteTUnderNanClamp) {
  const auto codes = [](const char* text) { return nonfinite_t_codes(*spec(text).quant); };
  EXPECT_TRUE(codes("rmsnorm fwd quant=e4m3 scale=static").empty());
  EXPECT_EQ(codes("rmsnorm fwd quant=e4m3 scale=static nan=clamp"), (std::vector<double>{448, 448, -448}));
  EXPECT_EQ(codes("rmsnorm fwd quant=int8 scale=token nan=clamp"), (std::vector<double>{0, 127, -128}));
  EXPECT_EQ(codes("rmsnorm fwd quant=int8 scale=token qmin=-127 nan=clamp"), (std::vector<double>{0, 127, -127}));
  EXPECT_EQ(std::fmax(-448.0f, std::fmin(NAN, 448.0f)), 448.0f);  // the clamp's order, as vLLM writes it
}

}  // namespace
}  // namespace normcheck
