// A rounding point that overflows or underflows (normcheck/spec_reference.h,
// normcheck/spec_policy.h): the policy's value there is the format's own
// (+-inf past its largest finite value, a subnormal or 0 below its smallest
// normal), in the exact policy reference and in the admissible range alike.
//
// A RapidCheck property per rounding point runs both against a direct float32
// simulation of the policy (a two-pass kernel rounding where the spec says,
// with round_to_format, the one home of the formats) on f16 and bf16 rows
// drawn so that the point's value leaves the format's normal range:
//   - the simulated kernel's outputs lie in the admissible range, and so do
//     the policy reference's own values (the two homes agree);
//   - no element of a row with finite inputs has a NaN range unless the
//     policy's own value is NaN (0 inf: a zero s - mu times an r rounded to inf);
//   - where the simulated point's value is past the overflow boundary by a
//     margin (2^-8 relative, far beyond the float32 error of these rows, a few
//     2^-24), the reference's y is the simulation's infinity, bit for bit, and
//     the range is that infinity alone;
//   - a stored sum past the range is residual_out's infinity, and its row is
//     one with a non-finite input of the norm (finite = 0: the non-finite rule).
// Every family must reach its case: the point's value leaves the normal range
// on a stated share of the drawn problems.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "normcheck/float_format.h"
#include "normcheck/op_spec.h"
#include "normcheck/spec_policy.h"
#include "normcheck/spec_reference.h"
#include "test_seed.h"

namespace normcheck {
namespace {

// The stored inputs of one problem.
struct Rows {
  int64_t rows = 2, cols = 0;
  std::vector<float> x, residual, gamma, beta;
  float eps = 0;
  SpecInputs inputs() const { return {rows, cols, x, residual, gamma, beta, eps, {}}; }
};

float in_format(DType t, double v) { return static_cast<float>(round_to_format(t, v)); }

// Which point a family drives out of the normal range, in which format, and which way.
struct Family {
  RoundingPoint point;
  DType t;
  bool overflow;  // past the largest finite value; otherwise below the smallest normal
};

// The spec of a family: the point rounded to t, every activation in t.
OpSpec spec_of(const Family& f, bool layer) {
  std::string text = std::string(layer ? "layernorm" : "rmsnorm") + " fwd dtype=" + (f.t == DType::f16 ? "f16" : "bf16");
  if (f.point == RoundingPoint::sum) text += " add";
  if (f.point == RoundingPoint::weight) text += " weight=1+gamma";
  text += " round=" + std::string(to_string(f.point)) + ":" + (f.t == DType::f16 ? "f16" : "bf16");
  const SpecParse p = parse_spec(text);
  if (!p.spec) throw std::logic_error(text + ": " + p.error);
  return *p.spec;
}

// Problems whose point leaves t's normal range. Integers m in [-64, 64] set
// the shapes, powers of two the scales; L is t's largest finite value and
// big = +-L [3/4, 3/2) (past L two times in three; float32 clamps at FLT_MAX):
//   sum over      a quarter of the elements x = residual = min(|big|, L), one sign: the sum past L
//   r over (f16)  x = m 2^-22, eps = 0: sigma ~ 2^-17, r ~ 2^17 > 65504
//   r under (f16) x = 1000 m, eps = 0: sigma ~ 37000, r ~ 2^-15, below f16's smallest normal 2^-14
//   xhat under    pairs +-(1 + |m|) per row, or pairs of tiny m 2^(min_exp - 4): there xhat is below 2^min_exp
//   weight over   gamma = big: 1 + gamma past L (gamma is float32 in these specs)
//   weight under (f16) gamma = -1 + k 2^-24, k in [1, 64]: 1 + gamma = k 2^-24, an f16 subnormal
//   scaled over   gamma = big: gamma xhat past L where |xhat| > 4/3 (> 2/3 for the largest gamma)
//   scaled under  gamma = m 2^(min_exp - 8): |gamma xhat| below 2^min_exp where |xhat| < 4
Rows draw_rows(const Family& f, bool layer) {
  const FloatFormat fmt = float_format(f.t);
  Rows c;
  c.cols = *rc::gen::inRange<int64_t>(2, 17);
  const auto n = static_cast<std::size_t>(c.rows * c.cols), d = static_cast<std::size_t>(c.cols);
  const auto ints = [](std::size_t k, int lo, int hi) {
    return *rc::gen::container<std::vector<int>>(k, rc::gen::inRange(lo, hi));
  };
  const std::vector<int> m = ints(n, -64, 65), g = ints(d, -64, 65), shares = ints(n, 0, 4);
  const double largest = largest_finite(f.t), flt_max = std::numeric_limits<float>::max();
  const auto big = [&](int q) { return (q < 0 ? -1 : 1) * std::min(largest * (48 + std::abs(q) % 48) / 64, flt_max); };
  c.eps = f.point == RoundingPoint::r ? 0.0f : 1e-6f;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i % d, pair = i - j % 2;  // the element's column, and the first of its pair
    double x = m[i] / 16.0, residual = m[(i + 1) % n] / 16.0;
    if (f.point == RoundingPoint::r) x = f.overflow ? std::ldexp(m[i], -22) : 1000.0 * m[i];
    if (f.point == RoundingPoint::xhat) {
      const bool tiny = shares[pair] == 0 || (j % 2 == 0 && j + 1 == d);  // a tiny pair, or a row's odd last element
      x = tiny ? std::ldexp(m[i], fmt.min_exp - 4) : (j % 2 ? -1.0 : 1.0) * (1 + std::abs(m[pair]));
    }
    if (f.point == RoundingPoint::sum && shares[i] == 0) x = residual = std::copysign(std::min(std::fabs(big(m[i])), largest), m[i] < 0 ? -1.0 : 1.0);
    c.x.push_back(in_format(f.t, x));
    if (f.point == RoundingPoint::sum) c.residual.push_back(in_format(f.t, residual));
  }
  for (std::size_t j = 0; j < d; ++j) {
    const int q = g[j] == 0 ? 1 : g[j];
    double w = 1 + q / 128.0;
    if (f.point == RoundingPoint::weight) w = f.overflow ? big(q) : -1 + std::ldexp(1 + std::abs(q) % 64, -24);
    if (f.point == RoundingPoint::scaled) w = f.overflow ? big(q) : std::ldexp(q, fmt.min_exp - 8);
    c.gamma.push_back(in_format(DType::f32, w));
    if (layer) c.beta.push_back(in_format(DType::f32, g[(j + 1) % d] / 64.0));
  }
  return c;
}

// A float32 kernel that follows the policy: two-pass statistics, each stage
// in float32, rounded to its format where the spec rounds.
struct Simulated {
  SpecOutputs out;
  bool left_normal_range = false;       // some point's nonzero value rounded to +-inf, a subnormal or 0
  std::vector<char> clearly_overflows;  // per y element: its point's value past the boundary by 2^-8
};

Simulated simulate(const OpSpec& spec, const Rows& c) {
  Simulated sim;
  const bool layer = spec.norm == NormKind::layernorm;
  const auto d = static_cast<std::size_t>(c.cols);
  const auto at = [&](RoundingPoint p, float v, bool& clear) {
    const std::optional<DType> t = spec.rounding_at(p);
    if (!t) return v;
    const float r = in_format(*t, v);
    const FormatConstants& k = format_constants(*t);
    // (a float32 value already past float32's range, as a bf16 sum or product can be, counts: it is the point's inf)
    if (!std::isnan(v) && v != 0 && (std::isinf(r) || std::fabs(r) < k.smallest_normal)) sim.left_normal_range = true;
    if (std::fabs(v) >= k.binade_above_max * (1 + 0x1p-8)) clear = true;
    return r;
  };
  const auto out_t = [&](TensorName t, float v) { return round_to_format(spec.dtype_of(t), v); };
  for (int64_t row = 0; row < c.rows; ++row) {
    const std::size_t base = static_cast<std::size_t>(row) * d;
    std::vector<float> s(d);
    bool row_clear = false;
    for (std::size_t j = 0; j < d; ++j) {
      s[j] = c.x[base + j];
      if (!spec.add) continue;
      const float sum = c.x[base + j] + c.residual[base + j];
      sim.out.residual_out.push_back(out_t(TensorName::residual_out, sum));
      bool unused = false;
      s[j] = at(RoundingPoint::sum, sum, unused);
    }
    float mean = 0, second = 0;
    for (float v : s) mean += v;
    mean /= static_cast<float>(d);
    for (float v : s) second += layer ? (v - mean) * (v - mean) : v * v;
    const float r = 1.0f / std::sqrt(second / static_cast<float>(d) + c.eps);
    const float rho = at(RoundingPoint::r, r, row_clear);
    if (layer) sim.out.mean.push_back(out_t(TensorName::mean, mean));
    sim.out.stat.push_back(out_t(TensorName::stat, rho));
    for (std::size_t j = 0; j < d; ++j) {
      bool clear = row_clear;
      const float xhat = at(RoundingPoint::xhat, (layer ? s[j] - mean : s[j]) * rho, clear);
      const float w = at(RoundingPoint::weight, spec.weight == Weight::one_plus_gamma ? 1.0f + c.gamma[j] : c.gamma[j], clear);
      const float scaled = at(RoundingPoint::scaled, w * xhat, clear);
      sim.out.y.push_back(out_t(TensorName::y, c.beta.empty() ? scaled : scaled + c.beta[j]));
      sim.clearly_overflows.push_back(clear);
    }
  }
  return sim;
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::string describe(const PolicyCheck& c) {
  std::ostringstream o;
  o << c.outside << " of " << c.checked << " outside; first " << c.first_output << "[" << c.first_index << "] = "
    << c.first_value << " not in [" << c.first_lo << ", " << c.first_hi << "]";
  return o.str();
}

// What one family's run reached: the share of problems whose point left the
// normal range, and how many y elements were compared at an infinity.
struct Reached {
  double share = 0;
  int infinities = 0;
};

// The property over one family (file header).
Reached check_family(const Family& f) {
  static const uint64_t seed = test::test_seed();
  int cases = 0, left = 0, infinities = 0;
  const auto property = [&] {
    const bool layer = *rc::gen::arbitrary<bool>();
    const OpSpec spec = spec_of(f, layer);
    const Rows c = draw_rows(f, layer);
    const SpecInputs in = c.inputs();
    const Simulated sim = simulate(spec, c);
    const SpecForwardReference ref = spec_reference_fwd(spec, in, SpecResult::policy, SpecPhases::exact_only);
    const SpecAdmissible range = spec_admissible_fwd(spec, in);
    ++cases;
    if (sim.left_normal_range) ++left;
    RC_TAG(sim.left_normal_range ? "left the normal range" : "stayed normal");
    const std::string what = to_text(spec);
    // the fast phase (which takes only `sum` of the rounding points) decides the same values
    const SpecForwardReference fast = spec_reference_fwd(spec, in, SpecResult::policy);
    for (std::size_t i = 0; i < ref.y.rounded.size(); ++i)
      if (!same_value(fast.y.rounded[i], ref.y.rounded[i]))
        RC_FAIL(what + ": y[" + std::to_string(i) + "]: the fast phase's " + std::to_string(fast.y.rounded[i]) +
                ", the interpreter's " + std::to_string(ref.y.rounded[i]));
    // no NaN end where the policy's value is not NaN, on rows with finite inputs
    const auto nan_end = [](const AdmissibleRange& a, std::size_t i) { return std::isnan(a.lo[i]) || std::isnan(a.hi[i]); };
    for (std::size_t i = 0; i < sim.out.y.size(); ++i) {
      const std::size_t row = i / static_cast<std::size_t>(c.cols);
      if (!ref.finite[row]) continue;
      if (!std::isnan(ref.y.rounded[i]) && nan_end(range.y, i))
        RC_FAIL(what + ": y[" + std::to_string(i) + "] has a NaN range where the policy gives " +
                std::to_string(ref.y.rounded[i]));
      if (i % static_cast<std::size_t>(c.cols) == 0 && !std::isnan(ref.stat.rounded[row]) && nan_end(range.stat, row))
        RC_FAIL(what + ": the statistic of row " + std::to_string(row) + " has a NaN range where the policy gives " +
                std::to_string(ref.stat.rounded[row]));
    }
    const PolicyCheck kernel = check_policy(spec, range, sim.out);
    if (kernel.outside != 0) RC_FAIL(what + ": the simulated kernel: " + describe(kernel));
    const SpecOutputs own{ref.y.rounded, ref.residual_out.rounded, ref.mean.rounded, ref.stat.rounded, {}};
    const PolicyCheck policy = check_policy(spec, range, own);
    if (policy.outside != 0) RC_FAIL(what + ": the policy reference's own values: " + describe(policy));
    for (std::size_t i = 0; i < sim.out.y.size(); ++i) {
      if (!sim.clearly_overflows[i] || std::isnan(ref.y.rounded[i])) continue;  // 0 inf: NaN in both
      ++infinities;
      if (!same_value(sim.out.y[i], ref.y.rounded[i]))
        RC_FAIL(what + ": y[" + std::to_string(i) + "]: the simulation's " + std::to_string(sim.out.y[i]) +
                " past the boundary, the reference's " + std::to_string(ref.y.rounded[i]));
      // the range is that infinity alone, not the whole line (nothing promised)
      if (range.y.lo[i] != ref.y.rounded[i] || range.y.hi[i] != ref.y.rounded[i])
        RC_FAIL(what + ": y[" + std::to_string(i) + "]: the policy's " + std::to_string(ref.y.rounded[i]) +
                ", the range [" + std::to_string(range.y.lo[i]) + ", " + std::to_string(range.y.hi[i]) + "]");
    }
    // a stored sum past the range: residual_out's infinity, and a row whose norm input is non-finite
    if (spec.add)
      for (std::size_t i = 0; i < sim.out.residual_out.size(); ++i) {
        if (!std::isinf(sim.out.residual_out[i])) continue;
        if (!same_value(sim.out.residual_out[i], ref.residual_out.rounded[i]))
          RC_FAIL(what + ": residual_out[" + std::to_string(i) + "] overflows in the simulation only");
        if (ref.finite[i / static_cast<std::size_t>(c.cols)])
          RC_FAIL(what + ": residual_out[" + std::to_string(i) + "] is infinite on a row the reference calls finite");
      }
  };
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = 60;
  rc::detail::TestMetadata meta;
  meta.id = meta.description = std::string(to_string(f.point)) + (f.t == DType::f16 ? " f16" : " bf16") +
                               (f.overflow ? " overflow" : " underflow");
  const rc::detail::TestResult result = rc::detail::checkTestable(property, meta, params);
  std::ostringstream report;
  rc::detail::printResultMessage(result, report);
  EXPECT_TRUE(result.is<rc::detail::SuccessResult>()) << meta.id << ": " << report.str();
  std::cout << meta.id << ": " << left << " of " << cases << " problems left the normal range, " << infinities
            << " y elements compared at an infinity\n";
  return {cases ? static_cast<double>(left) / cases : 0, infinities};
}

// The share of drawn problems that must reach the family's case: the draws
// above put it there on most problems (a stored sum past L wherever a quarter
// of the elements is big; gamma xhat past L wherever |xhat| > 4/3 at most);
// half is far below the 0.7 to 1 they give, and far above the 0 of draws
// that miss the case.
constexpr double kReached = 0.5;

TEST(SpecPolicyOverflow, SumPastTheLargestFiniteValueIsInfinite) {
  // The sum cannot underflow: two values of t below its smallest normal add
  // to a multiple of its subnormal spacing, a value of t.
  for (DType t : {DType::f16, DType::bf16}) EXPECT_GE(check_family({RoundingPoint::sum, t, true}).share, kReached);
}

TEST(SpecPolicyOverflow, RRoundedToF16OverflowsAndUnderflows) {
  // bf16 has float32's exponent range: an r past it needs sigma below 2^-128
  // (or above 2^126), whose squares a float32 kernel cannot form.
  const Reached over = check_family({RoundingPoint::r, DType::f16, true});
  EXPECT_GE(over.share, kReached);
  EXPECT_GT(over.infinities, 0);  // y = w (s - mu) inf, compared with the simulation's
  EXPECT_GE(check_family({RoundingPoint::r, DType::f16, false}).share, kReached);
}

TEST(SpecPolicyOverflow, XhatRoundedToASubnormalOrZero) {
  // |xhat| <= sqrt(d) < 2^9 for every row spec_reference_fwd takes: it cannot overflow
  for (DType t : {DType::f16, DType::bf16}) EXPECT_GE(check_family({RoundingPoint::xhat, t, false}).share, kReached);
}

TEST(SpecPolicyOverflow, OnePlusGammaRoundedPastTheRangeOrToASubnormal) {
  // 1 + gamma for a float32 gamma near -1 is a multiple of 2^-24, a bf16 normal;
  // bf16's 1 + gamma passes its largest value below FLT_MAX, short of the 2^-8 margin
  const Reached f16_over = check_family({RoundingPoint::weight, DType::f16, true});
  EXPECT_GE(f16_over.share, kReached);
  EXPECT_GT(f16_over.infinities, 0);
  EXPECT_GE(check_family({RoundingPoint::weight, DType::bf16, true}).share, kReached);
  EXPECT_GE(check_family({RoundingPoint::weight, DType::f16, false}).share, kReached);
}

TEST(SpecPolicyOverflow, GammaXhatRoundedPastTheRangeOrBelowIt) {
  for (DType t : {DType::f16, DType::bf16}) {
    const Reached over = check_family({RoundingPoint::scaled, t, true});
    EXPECT_GE(over.share, kReached);
    EXPECT_GT(over.infinities, 0);
    EXPECT_GE(check_family({RoundingPoint::scaled, t, false}).share, kReached);
  }
}

}  // namespace
}  // namespace normcheck
