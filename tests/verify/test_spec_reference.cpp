// normcheck/spec_reference.h against independent computations:
//   - the table's specs against the proven references of reference.h (each
//     value correctly rounded to double by both, so equal bit for bit);
//   - each stage of a spec (the residual add, 1 + gamma, the output's
//     format) against the proven reference on inputs the stage reduces to;
//   - each rounding point of a policy against the same rounding done here in
//     double arithmetic that is exact for the values chosen;
//   - its two phases against each other: every result below is computed by
//     the interpreter alone and with the fast phase first, which must agree
//     bit for bit (reference(), and a sweep over specs and inputs).
#include "normcheck/spec_reference.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "normcheck/float_format.h"
#include "normcheck/reference.h"
#include "test_seed.h"

namespace normcheck {
namespace {

OpSpec spec(std::string_view text) {
  const SpecParse p = parse_spec(text);
  EXPECT_TRUE(p.spec) << p.error;
  return p.spec.value_or(OpSpec{});
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

// Equal, NaN to NaN (the interpreter's NaN and the float reference's may differ in payload).
bool same_value(double a, double b) { return same_bits(a, b) || (std::isnan(a) && std::isnan(b)); }

void expect_same(const std::vector<double>& fast, const std::vector<double>& exact, const char* what) {
  ASSERT_EQ(fast.size(), exact.size()) << what;
  for (std::size_t i = 0; i < fast.size(); ++i)
    EXPECT_TRUE(same_value(fast[i], exact[i])) << what << "[" << i << "]: " << fast[i] << " vs " << exact[i];
}

// spec_reference_fwd with the fast phase first and by the interpreter alone:
// the two agree on every value, and the first is returned.
SpecForwardReference reference(const OpSpec& s, const SpecInputs& in, SpecResult which) {
  SpecForwardReference fast = spec_reference_fwd(s, in, which, SpecPhases::fast_then_exact);
  const SpecForwardReference exact = spec_reference_fwd(s, in, which, SpecPhases::exact_only);
  for (const auto& [a, b, what] : {std::tuple{&fast.y, &exact.y, "y"}, {&fast.residual_out, &exact.residual_out, "residual_out"},
                                   {&fast.mean, &exact.mean, "mean"}, {&fast.stat, &exact.stat, "stat"}}) {
    expect_same(a->exact, b->exact, what);
    expect_same(a->rounded, b->rounded, what);
  }
  expect_same(fast.xhat, exact.xhat, "xhat");
  EXPECT_EQ(fast.finite, exact.finite);
  expect_same(fast.mean_abs_s, exact.mean_abs_s, "mean_abs_s");  // both correctly rounded (reference.h; condition())
  for (std::size_t r = 0; r < fast.condition.size(); ++r) {
    const RowCondition &f = fast.condition[r], &e = exact.condition[r];
    EXPECT_EQ(f.d, e.d);
    EXPECT_TRUE(same_value(f.r, e.r)) << r;
    // kappa, max_kappa, eps_share: products of correctly rounded doubles, each within 2^-51 relative
    for (const auto& [x, y] : {std::pair{f.kappa, e.kappa}, {f.max_kappa, e.max_kappa}, {f.eps_share, e.eps_share}})
      EXPECT_TRUE(same_value(x, y) || std::fabs(x - y) <= 0x1p-51 * std::fabs(y)) << r << ": " << x << " vs " << y;
  }
  return fast;
}

// The rounding to format t (to nearest, ties to even) of a double v that is
// the correct rounding of an exact value: the same as the exact value's
// unless v lies exactly on a midpoint of t, where the exact value may lie on
// either side (`tie` is set then, and the caller skips the element). Done in
// double arithmetic that is exact: v / spacing is a power-of-two scaling,
// floor and the remainder are exact.
double round_double(DType t, double v, bool& tie) {
  const double s = spacing(t, v);
  const double below = std::floor(v / s) * s, rem = v - below;
  tie = rem * 2 == s;
  const double r = rem * 2 < s || (tie && std::fmod(below / s, 2) == 0) ? below : below + s;
  return std::fabs(r) > largest_finite(t) ? std::copysign(INFINITY, r) : r;
}

struct Row {
  std::vector<float> x, gamma, beta;
  float eps;
};

std::vector<Row> rows_to_try(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<Row> rows;
  for (int64_t d : {1, 2, 3, 5, 64, 768})
    for (double shift : {0.0, 1e4})
      for (float eps : {1e-5f, 0.0f})
        for (bool affine : {false, true}) {
          Row r{{}, {}, {}, eps};
          for (int64_t i = 0; i < d; ++i) r.x.push_back(static_cast<float>(shift + normal(rng)));
          if (affine)
            for (int64_t i = 0; i < d; ++i) {
              r.gamma.push_back(static_cast<float>(1 + 0.1 * normal(rng)));
              r.beta.push_back(static_cast<float>(0.1 * normal(rng)));
            }
          rows.push_back(std::move(r));
        }
  rows.push_back({{0x1p-120f, -0x1p-121f, 0x1p-122f}, {}, {}, 0.0f});  // squares far below float's range
  rows.push_back({{3.0f, 3.0f, 3.0f}, {}, {}, 0.0f});                   // constant, eps = 0: 0/0
  rows.push_back({{1.0f, 4.0f}, {1.0f}, {0x1p-24f}, 0.0f});             // xhat = +-1 exactly, y a float32 midpoint
  rows.back().gamma = {1.0f, 1.0f};
  rows.back().beta = {0x1p-24f, 0x1p-24f};
  return rows;
}

TEST(SpecReference, TheTablesSpecsGiveTheProvenReferenceBitForBit) {
  std::mt19937_64 rng(test::test_seed());
  int compared = 0;
  for (const Row& row : rows_to_try(rng)) {
    const auto d = static_cast<int64_t>(row.x.size());
    const LayerNormFwdReference ln = reference_layernorm_fwd(row.x, row.gamma, row.beta, 1, d, row.eps);
    const SpecForwardReference sln =
        reference(spec("layernorm fwd"), {1, d, row.x, {}, row.gamma, row.beta, row.eps, {}}, SpecResult::exact_math);
    EXPECT_TRUE(same_bits(sln.mean.exact[0], ln.mean.exact[0])) << sln.mean.exact[0] << " " << ln.mean.exact[0];
    EXPECT_TRUE(same_bits(sln.stat.exact[0], ln.rstd.exact[0])) << sln.stat.exact[0] << " " << ln.rstd.exact[0];
    EXPECT_TRUE(same_bits(sln.stat.rounded[0], ln.rstd.rounded[0]));
    for (int64_t i = 0; i < d; ++i) {
      ASSERT_TRUE(same_bits(sln.y.exact[i], ln.y.exact[i])) << "d " << d << " i " << i << ": " << sln.y.exact[i]
                                                            << " " << ln.y.exact[i];
      ASSERT_TRUE(same_bits(sln.y.rounded[i], ln.y.rounded[i])) << sln.y.rounded[i] << " " << ln.y.rounded[i];
      ASSERT_TRUE(same_bits(sln.xhat[i], ln.xhat.exact[i]));
    }
    const RmsNormFwdReference rms = reference_rmsnorm_fwd(row.x, row.gamma, 1, d, row.eps);
    const SpecForwardReference srms =
        reference(spec("rmsnorm fwd"), {1, d, row.x, {}, row.gamma, {}, row.eps, {}}, SpecResult::exact_math);
    EXPECT_TRUE(same_bits(srms.stat.exact[0], rms.rrms.exact[0]));
    for (int64_t i = 0; i < d; ++i) {
      ASSERT_TRUE(same_bits(srms.y.exact[i], rms.y.exact[i])) << "d " << d << " i " << i;
      ASSERT_TRUE(same_bits(srms.y.rounded[i], rms.y.rounded[i]));
      ASSERT_TRUE(same_bits(srms.xhat[i], rms.xhat.exact[i]));
    }
    ++compared;
  }
  EXPECT_EQ(compared, 6 * 2 * 2 * 2 + 3);
}

TEST(SpecReference, A16BitOutputIsTheCorrectRoundingOfTheExactValue) {
  // bf16 inputs, y in bf16 and in f16: the exact values are those of the
  // float32 spec on the same (widened) inputs; the rounded ones their bf16 / f16 roundings.
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  std::vector<float> x(256);
  for (float& v : x) v = float_from_bf16(bf16_from_float(static_cast<float>(3 + normal(rng))));
  const RmsNormFwdReference ref = reference_rmsnorm_fwd(x, {}, 4, 64, 1e-6f);
  for (const char* text : {"rmsnorm fwd dtype=bf16", "rmsnorm fwd dtype=bf16 y=f16"}) {
    const OpSpec s = spec(text);
    const SpecForwardReference out = reference(s, {4, 64, x, {}, {}, {}, 1e-6f, {}}, SpecResult::policy);
    int ties = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(same_bits(out.y.exact[i], ref.y.exact[i]));
      bool tie;
      const double expected = round_double(s.dtype_of(TensorName::y), ref.y.exact[i], tie);
      if (tie) ++ties;
      else EXPECT_EQ(out.y.rounded[i], expected) << text << " element " << i;
    }
    EXPECT_LT(ties, 2) << "the exact values are irrational: a double on a midpoint is a rare accident";
  }
}

TEST(SpecReference, F16OutputsRoundToEvenUnderflowAndOverflow) {
  // rmsnorm of [c, c] with eps = 0 has xhat = 1 exactly, so y = gamma: the f16
  // rounding of a float gamma is the hardware's (f16_from_float, one rounding).
  const std::vector<float> x = {5.0f, 5.0f};
  for (float g : {0x1p-25f, 3 * 0x1p-25f, 0x1.8p-20f, 65504.0f, 65519.0f, 65520.0f, 70000.0f, -0x1.0040p-14f}) {
    const std::vector<float> gamma = {g, g};
    const SpecForwardReference out =
        reference(spec("rmsnorm fwd y=f16"), {1, 2, x, {}, gamma, {}, 0.0f, {}}, SpecResult::exact_math);
    EXPECT_EQ(out.y.exact[0], g);
    EXPECT_TRUE(same_bits(out.y.rounded[0], float_from_f16(f16_from_float(g)))) << g << ": " << out.y.rounded[0];
  }
}

TEST(SpecReference, TheResidualAddNormalizesTheSumThePolicyReads) {
  // x and residual bf16; sums that bf16 cannot hold
  const std::vector<float> x = {1.0f, -3.0f, 0.5f, 2.0f}, res = {0x1p-9f, 0x1p-7f, 0.25f, -0x1.02p1f};
  std::vector<float> exact_sum(4), bf16_sum(4);
  for (int i = 0; i < 4; ++i) {
    exact_sum[i] = x[i] + res[i];  // exact in float for these values
    bf16_sum[i] = float_from_bf16(bf16_from_float(exact_sum[i]));  // one rounding of the exact sum
  }
  ASSERT_NE(exact_sum, bf16_sum);
  const OpSpec vllm = spec("rmsnorm fwd dtype=bf16 add round=sum:bf16");
  const SpecInputs in{1, 4, x, res, {}, {}, 1e-6f, {}};
  const SpecForwardReference policy = reference(vllm, in, SpecResult::policy);
  const SpecForwardReference math = reference(vllm, in, SpecResult::exact_math);
  const RmsNormFwdReference on_rounded = reference_rmsnorm_fwd(bf16_sum, {}, 1, 4, 1e-6f);
  const RmsNormFwdReference on_exact = reference_rmsnorm_fwd(exact_sum, {}, 1, 4, 1e-6f);
  for (int i = 0; i < 4; ++i) {
    // the sum output is x + residual, and its bf16 rounding, under both
    EXPECT_EQ(policy.residual_out.exact[i], exact_sum[i]);
    EXPECT_EQ(policy.residual_out.rounded[i], bf16_sum[i]);
    EXPECT_EQ(math.residual_out.exact[i], exact_sum[i]);
    EXPECT_TRUE(same_bits(policy.y.exact[i], on_rounded.y.exact[i]));
    EXPECT_TRUE(same_bits(math.y.exact[i], on_exact.y.exact[i]));
  }
  EXPECT_TRUE(same_bits(policy.stat.exact[0], on_rounded.rrms.exact[0]));
  EXPECT_FALSE(same_bits(policy.stat.exact[0], math.stat.exact[0]));

  // A sum float32 cannot hold: the policy that rounds it to f32 reads 1, exact math reads 1 + 2^-40.
  const std::vector<float> x2 = {1.0f, 3.0f}, res2 = {0x1p-40f, 0.0f}, ones = {1.0f, 3.0f};
  const OpSpec flashinfer = spec("rmsnorm fwd add round=sum:f32");
  const SpecForwardReference p2 = reference(flashinfer, {1, 2, x2, res2, {}, {}, 0.0f, {}}, SpecResult::policy);
  const SpecForwardReference m2 = reference(flashinfer, {1, 2, x2, res2, {}, {}, 0.0f, {}}, SpecResult::exact_math);
  const RmsNormFwdReference r2 = reference_rmsnorm_fwd(ones, {}, 1, 2, 0.0f);
  EXPECT_TRUE(same_bits(p2.y.exact[0], r2.y.exact[0]));
  EXPECT_EQ(m2.residual_out.exact[0], 1.0 + 0x1p-40);
  // y_0 = s_0 / sqrt((s_0^2 + 9) / 2) grows with s_0 at dy_0/ds_0 = 2 * 9 / (s^2 + 9)^(3/2) sqrt(2)... about 0.4:
  // a 2^-40 larger s_0 moves y_0 up by 0.4 * 2^-40, far more than double's 2^-53 resolution there.
  EXPECT_GT(m2.y.exact[0], p2.y.exact[0]);
  EXPECT_NEAR(m2.y.exact[0] - p2.y.exact[0], 0.4 * 0x1p-40, 0.05 * 0x1p-40);
}

TEST(SpecReference, OnePlusGammaIsExactAndItsRoundingIsThePolicys) {
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  std::vector<float> x(32), w(32), one_plus(32), one_plus_bf16(32);
  for (int i = 0; i < 32; ++i) {
    x[i] = static_cast<float>(normal(rng));
    w[i] = static_cast<float>(std::ldexp(std::round(normal(rng) * 64), -10));  // 1 + w a float, not a bf16
    one_plus[i] = 1.0f + w[i];
    one_plus_bf16[i] = float_from_bf16(bf16_from_float(one_plus[i]));
  }
  const OpSpec gemma = spec("rmsnorm fwd weight=1+gamma round=weight:bf16");
  const SpecInputs in{1, 32, x, {}, w, {}, 1e-6f, {}};
  const SpecForwardReference math = reference(gemma, in, SpecResult::exact_math);
  const SpecForwardReference policy = reference(gemma, in, SpecResult::policy);
  const RmsNormFwdReference exact = reference_rmsnorm_fwd(x, one_plus, 1, 32, 1e-6f);
  const RmsNormFwdReference rounded = reference_rmsnorm_fwd(x, one_plus_bf16, 1, 32, 1e-6f);
  int differ = 0;
  for (int i = 0; i < 32; ++i) {
    EXPECT_TRUE(same_bits(math.y.exact[i], exact.y.exact[i]));
    EXPECT_TRUE(same_bits(policy.y.exact[i], rounded.y.exact[i]));
    differ += math.y.exact[i] != policy.y.exact[i];
  }
  EXPECT_GT(differ, 0);
}

TEST(SpecReference, EachRoundingPointRoundsWhereThePolicySays) {
  // Llama: y = bf16(bf16(x r) w); DeepSpeed: y = x bf16(r) (no weight). r and
  // x r from the proven reference (correctly rounded doubles), rounded here.
  std::mt19937_64 rng(test::test_seed());
  std::normal_distribution<double> normal;
  std::vector<float> x(64), w(64);
  for (int i = 0; i < 64; ++i) {
    x[i] = float_from_bf16(bf16_from_float(static_cast<float>(2 * normal(rng))));
    w[i] = float_from_bf16(bf16_from_float(static_cast<float>(1 + 0.2 * normal(rng))));
  }
  const RmsNormFwdReference ref = reference_rmsnorm_fwd(x, {}, 1, 64, 1e-6f);
  const SpecForwardReference llama = reference(spec("rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16"),
                                                        {1, 64, x, {}, w, {}, 1e-6f, {}}, SpecResult::policy);
  bool tie;
  const double rho = round_double(DType::bf16, ref.rrms.exact[0], tie);
  ASSERT_FALSE(tie);
  const SpecForwardReference deepspeed =
      reference(spec("rmsnorm fwd dtype=bf16 round=r:bf16"), {1, 64, x, {}, {}, {}, 1e-6f, {}}, SpecResult::policy);
  EXPECT_EQ(deepspeed.stat.exact[0], rho);
  for (int i = 0; i < 64; ++i) {
    const double xr = round_double(DType::bf16, ref.xhat.exact[i], tie);
    if (tie) continue;
    EXPECT_EQ(llama.xhat[i], xr);
    EXPECT_EQ(llama.y.exact[i], xr * w[i]);  // exact: two 8-bit significands
    EXPECT_EQ(llama.y.rounded[i], round_double(DType::bf16, xr * w[i], tie));
    EXPECT_EQ(deepspeed.y.exact[i], x[i] * rho);  // exact: 8-bit significands
  }

  // Apex's LayerNorm in bf16: y = bf16(bf16(gamma bf16(xhat)) + beta)
  std::vector<float> g(64), b(64);
  for (int i = 0; i < 64; ++i) {
    g[i] = float_from_bf16(bf16_from_float(static_cast<float>(1 + 0.2 * normal(rng))));
    b[i] = float_from_bf16(bf16_from_float(static_cast<float>(0.1 * normal(rng))));
  }
  const LayerNormFwdReference ln = reference_layernorm_fwd(x, {}, {}, 1, 64, 1e-5f);
  const SpecForwardReference apex =
      reference(spec("layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 round=xhat:bf16,scaled:bf16"),
                         {1, 64, x, {}, g, b, 1e-5f, {}}, SpecResult::policy);
  for (int i = 0; i < 64; ++i) {
    const double xh = round_double(DType::bf16, ln.xhat.exact[i], tie);
    if (tie) continue;
    const double scaled = round_double(DType::bf16, g[i] * xh, tie);  // g xh exact in double
    EXPECT_EQ(apex.y.exact[i], scaled + b[i]) << i;                    // exact: both bf16 of similar size
  }
}

TEST(SpecReference, ARowWithANonFiniteInputIsAllNaN) {
  const std::vector<float> x = {1.0f, INFINITY, 2.0f, 3.0f, 4.0f, 5.0f};
  const SpecForwardReference out =
      reference(spec("layernorm fwd"), {2, 3, x, {}, {}, {}, 1e-5f, {}}, SpecResult::exact_math);
  EXPECT_EQ(out.finite, (std::vector<char>{0, 1}));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(out.y.exact[i]));
  EXPECT_TRUE(std::isnan(out.mean.exact[0]));
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isfinite(out.y.exact[i]));
}

TEST(SpecReference, RefusesWhatIsNotAForwardProblemOfItsSpec) {
  const std::vector<float> x = {1.0f, 2.0f};
  EXPECT_THROW(reference(spec("rmsnorm bwd"), {1, 2, x, {}, {}, {}, 0, {}}, SpecResult::policy),
               std::invalid_argument);
  EXPECT_THROW(reference(spec("rmsnorm fwd linear"), {1, 2, x, {}, {}, {}, 0, {}}, SpecResult::policy),
               std::invalid_argument);
  EXPECT_THROW(reference(spec("rmsnorm fwd add"), {1, 2, x, {}, {}, {}, 0, {}}, SpecResult::policy),
               std::invalid_argument);  // no residual
  EXPECT_THROW(reference(spec("rmsnorm fwd"), {1, 3, x, {}, {}, {}, 0, {}}, SpecResult::policy),
               std::invalid_argument);  // sizes
  EXPECT_THROW(reference(spec("rmsnorm fwd"), {1, 2, x, {}, {}, x, 0, {}}, SpecResult::policy),
               std::invalid_argument);  // beta on a spec without bias
}

}  // namespace
}  // namespace normcheck

namespace normcheck {
namespace {

TEST(SpecReference, ANonFiniteGammaOrBetaTouchesOnlyItsColumn) {
  // docs/semantics.md: gamma and beta enter elementwise, with IEEE rules
  const std::vector<float> x = {1.0f, 2.0f, 4.0f, 8.0f}, g = {INFINITY, 1.0f, 2.0f, NAN}, b = {0.0f, -INFINITY, 0.5f, 0.0f};
  const SpecForwardReference out =
      reference(spec("layernorm fwd"), {1, 4, x, {}, g, b, 1e-5f, {}}, SpecResult::exact_math);
  EXPECT_EQ(out.finite, (std::vector<char>{1}));
  EXPECT_EQ(out.y.exact[0], -INFINITY);  // xhat_0 < 0 times +inf
  EXPECT_EQ(out.y.exact[1], -INFINITY);
  EXPECT_TRUE(std::isfinite(out.y.exact[2]));
  EXPECT_TRUE(std::isnan(out.y.exact[3]));
}

TEST(SpecReference, TheFastPhaseAndTheInterpreterAgreeOnEverySpec) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  const char* specs[] = {
      "layernorm fwd",
      "rmsnorm fwd dtype=bf16",
      "layernorm fwd dtype=f16 rstd=f16 mean=f16",
      "rmsnorm fwd add dtype=bf16 round=sum:bf16",
      "rmsnorm fwd add dtype=bf16",
      "rmsnorm fwd add dtype=f16 weight=1+gamma gamma=f32",
      "layernorm fwd add dtype=bf16 gamma=f32 beta=f32",
      "rmsnorm fwd weight=1+gamma dtype=bf16 gamma=bf16 round=r:bf16",
  };
  for (const char* text : specs) {
    const OpSpec s = spec(text);
    for (int64_t d : {1, 3, 64, 257})
      for (float eps : {0.0f, 1e-6f}) {
        const int64_t rows = 3;
        const auto n = static_cast<std::size_t>(rows * d);
        const auto in_format = [&](TensorName t, double v) {
          return static_cast<float>(round_to_format(s.dtype_of(t), v));
        };
        std::vector<float> x(n), residual, gamma, beta;
        for (std::size_t i = 0; i < n; ++i) x[i] = in_format(TensorName::x, 1e3 * (i / d) + normal(rng));
        x[static_cast<std::size_t>(d) - 1] = in_format(TensorName::x, 0x1p-130);  // below float's normal range
        if (s.add) {
          residual.resize(n);
          for (std::size_t i = 0; i < n; ++i) residual[i] = in_format(TensorName::residual, normal(rng));
          residual[0] = in_format(TensorName::residual, 0x1p100);  // a sum not exact in double with x_0 ~ 1
        }
        if (s.weight != Weight::none) {
          gamma.resize(static_cast<std::size_t>(d));
          for (float& v : gamma) v = in_format(TensorName::gamma, 0.1 * normal(rng));
        }
        if (s.bias) {
          beta.resize(static_cast<std::size_t>(d));
          for (float& v : beta) v = in_format(TensorName::beta, 0.1 * normal(rng));
        }
        SCOPED_TRACE(std::string(text) + " d=" + std::to_string(d) + " seed=" + std::to_string(seed));
        for (SpecResult which : {SpecResult::exact_math, SpecResult::policy})
          reference(s, {rows, d, x, residual, gamma, beta, eps, {}}, which);
      }
  }
}

}  // namespace
}  // namespace normcheck

namespace normcheck {
namespace {

// w xhat can be dyadic (a possible tie) where xhat is not: here xhat_2 =
// D_2 rho / 3 is a third, gamma_2 = 15887622 2^-24 a multiple of 3, and their
// product lies exactly on a double midpoint. The interpreter forms w xhat from
// exact values in one quotient, so the tie is a point and is decided; a
// product of xhat's interval with w never narrows to it.
TEST(SpecReference, ADyadicWeightedXhatOfANonDyadicXhatIsDecided) {
  const std::vector<float> x = {-0x1.8ep+14f, -0x1.7acp+14f, 0x1.acp+13f};
  const std::vector<float> residual = {0x1.58p+14f, 0x1.5ecp-1f, 0x1.7dcp+0f};
  const std::vector<float> gamma = {0x1.e4da0cp-1f, 0x1.1984e4p+0f, 0x1.14f3aap+0f};
  const std::vector<float> beta = {0.0f, 0.0f, 0.0f};
  const SpecInputs in{1, 3, x, residual, gamma, beta, 0x1.0c6f7ap-20f, {}};
  SpecForwardReference out;
  ASSERT_NO_THROW(out = reference(spec("layernorm fwd dtype=f16 add round=r:f16"), in, SpecResult::policy));
  for (int j = 0; j < 3; ++j)  // y = w xhat (beta 0), each correctly rounded to double: within 2^-52 relative
    EXPECT_LE(std::fabs(out.y.exact[j] - gamma[j] * out.xhat[j]), 0x1p-51 * std::fabs(out.y.exact[j])) << j;
}

}  // namespace
}  // namespace normcheck

namespace normcheck {
namespace {

// The statistics of s the fast phase keeps (SpecForwardReference::s_stats)
// are the reference statistics of s, as row_scales() computes them in a pass
// of its own: every row of finite inputs it took, LayerNorm and RMSNorm,
// with a row of |mean|/sigma ~ 1e4 among them; a row with a non-finite x is
// not taken.
TEST(SpecReference, TheFastPhaseKeepsTheStatisticsOfS) {
  std::mt19937 rng(20261206);
  std::normal_distribution<float> normal(0, 1);
  const int64_t rows = 5, cols = 77;
  std::vector<float> x(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i / cols == 2 ? 1e4f : 0.0f) + normal(rng);
  x[3 * cols + 5] = NAN;
  for (const char* text : {"layernorm fwd", "rmsnorm fwd"}) {
    const SpecForwardReference out = reference(spec(text), {rows, cols, x, {}, {}, {}, 1e-5f, {}}, SpecResult::exact_math);
    const bool layer = std::string(text) == "layernorm fwd";
    const std::vector<RowStats> own = layer ? reference_layernorm_fwd_statistics(x, rows, cols, 1e-5f).stats
                                            : reference_rmsnorm_fwd_statistics(x, rows, cols, 1e-5f).stats;
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
      EXPECT_EQ(out.s_stats_known[r], r == 3 ? 0 : 1) << text << " row " << r;
      if (!out.s_stats_known[r]) continue;
      EXPECT_EQ(out.s_stats[r].finite, own[r].finite) << text << " row " << r;
      EXPECT_EQ(out.s_stats[r].mean, own[r].mean) << text << " row " << r;
      EXPECT_EQ(out.s_stats[r].variance, own[r].variance) << text << " row " << r;
    }
  }
}

}  // namespace
}  // namespace normcheck
