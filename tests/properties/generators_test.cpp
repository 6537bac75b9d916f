// Unit tests of the generators themselves: limits respected exactly, shrinks
// that stay in range and terminate, problems with consistent shapes, and the
// hard regions actually reached.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "generators.h"

namespace normcheck::props {
namespace {

bool shapes_consistent(const Problem& p, Op op) {
  const auto n = static_cast<size_t>(p.rows * p.cols);
  const bool backward = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
  return p.rows >= 1 && p.cols >= 1 && p.x.size() == n && (backward ? p.dy.size() == n : p.dy.empty()) &&
         (p.gamma.empty() || p.gamma.size() == static_cast<size_t>(p.cols)) &&
         (p.beta.empty() || p.beta.size() == static_cast<size_t>(p.cols));
}

// Every x within the kernel's range (non-finite only when allowed).
bool in_range(const Problem& p, const GenOptions& opts) {
  const double limit = max_abs_x(opts.range, p.cols);
  for (float v : p.x) {
    if (!std::isfinite(v)) {
      if (!opts.nonfinite || !opts.range.handles_nonfinite) return false;
    } else if (std::fabs(static_cast<double>(v)) > limit) {
      return false;
    }
  }
  return true;
}

TEST(FloatGenerator, RespectsLimitsExactly) {
  Rng rng(1);
  const FloatLimits limits{1e10, false};
  for (int i = 0; i < 200000; ++i) {
    const float v = draw_float(rng, limits);
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_LE(std::fabs(static_cast<double>(v)), 1e10);
  }
}

TEST(FloatGenerator, ReachesTheSpecials) {
  Rng rng(2);
  std::map<std::string, int> seen;
  for (int i = 0; i < 100000; ++i) {
    const float v = draw_float(rng, FloatLimits{});
    if (std::isnan(v)) ++seen["nan"];
    else if (std::isinf(v)) ++seen[v > 0 ? "+inf" : "-inf"];
    else if (v == 0) ++seen[std::signbit(v) ? "-0" : "+0"];
    else if (std::fpclassify(v) == FP_SUBNORMAL) ++seen["subnormal"];
    else if (std::fabs(v) == FLT_MAX) ++seen["max"];
    else if (std::fabs(v) > 0x1p64f) ++seen["x^2 overflows"];
  }
  for (const char* kind : {"nan", "+inf", "-inf", "-0", "+0", "subnormal", "max", "x^2 overflows"})
    EXPECT_GT(seen[kind], 0) << kind << " never drawn";
}

// Follows the first shrink candidate until none is left: must end (every
// candidate is strictly simpler) and never grow past max(|v|, 1).
TEST(FloatShrink, TerminatesAndNeverGrows) {
  Rng rng(3);
  for (int i = 0; i < 2000; ++i) {
    float v = draw_float(rng, FloatLimits{});
    for (int steps = 0;; ++steps) {
      ASSERT_LT(steps, 200) << "shrinking does not terminate";
      const auto next = rc::seq::take(1, shrink_float(v)).next();
      if (!next) break;
      ASSERT_TRUE(std::isfinite(*next));
      ASSERT_LE(std::fabs(*next), std::max(std::isfinite(v) ? std::fabs(v) : 1.0f, 1.0f));
      // Every other candidate obeys the magnitude rule too.
      auto all = shrink_float(v);
      while (auto c = all.next()) ASSERT_LE(std::fabs(*c), std::max(std::isfinite(v) ? std::fabs(v) : 1.0f, 1.0f));
      v = *next;
    }
    EXPECT_EQ(v, 0.0f) << "the first candidate is 0 whenever v != +0";
  }
}

TEST(ProblemGenerator, ShapesRangeAndShrinks) {
  GenOptions opts;
  opts.range = InputRange{1e6, true, false};  // |x| <= 1e6 / sqrt(d), no NaN/inf
  for (Op op : {Op::layernorm_fwd, Op::layernorm_bwd, Op::rmsnorm_fwd, Op::rmsnorm_bwd}) {
    opts.op = op;
    const auto gen = gen_problem(opts);
    for (int i = 0; i < 300; ++i) {
      const auto shrinkable = gen(rc::Random(static_cast<uint64_t>(i)), i % 101);
      const Problem p = shrinkable.value();
      ASSERT_TRUE(shapes_consistent(p, op));
      ASSERT_TRUE(in_range(p, opts));
      auto shrinks = rc::seq::take(40, shrinkable.shrinks());
      while (auto s = shrinks.next()) {
        const Problem q = s->value();
        ASSERT_TRUE(shapes_consistent(q, op));
        ASSERT_TRUE(in_range(q, opts));
      }
    }
  }
}

// A kernel's declared domain (kernel.h, InputRange): every generated eps is
// >= min_eps and every d in [min_d, max_d], while the eps choices at or above
// min_eps are all still drawn. The default domain, with the same draws, does
// produce eps = 0 and d < 16 (so the checks below can fail).
TEST(ProblemGenerator, StaysInsideTheDeclaredEpsAndD) {
  const auto draws = [](const InputRange& range) {
    GenOptions opts;
    opts.op = Op::rmsnorm_fwd;
    opts.range = range;
    std::set<float> eps;
    std::set<int64_t> d;
    const auto gen = gen_problem(opts);
    for (int i = 0; i < 400; ++i) {
      const Problem p = gen(rc::Random(static_cast<uint64_t>(i)), i % 101).value();
      eps.insert(p.eps);
      d.insert(p.cols);
    }
    return std::pair{eps, d};
  };
  const auto [open_eps, open_d] = draws(InputRange{});
  EXPECT_TRUE(open_eps.count(0.0f));
  EXPECT_LT(*open_d.begin(), 16);
  const auto [eps, d] = draws(InputRange{.min_eps = 1e-6f, .min_d = 16, .max_d = 100});
  EXPECT_EQ(eps, (std::set<float>{1e-6f, 1e-5f, 1e-2f}));
  EXPECT_EQ(*d.begin(), 16);
  EXPECT_LE(*d.rbegin(), 100);
  EXPECT_GT(d.size(), 5u) << "d still varies inside the range";
  // A minimum above every usual choice: eps is the minimum itself.
  EXPECT_EQ(draws(InputRange{.min_eps = 0.5f}).first, std::set<float>{0.5f});
}

// A domain with |x|>=M and row terms (the realistic preset): every drawn
// problem is inside it (declines() takes it, row terms read from the exact
// reference), for LayerNorm and RMSNorm, forward and backward. The negative
// control: the same draws without the domain are often outside it.
TEST(ProblemGenerator, StaysInsideTheRealisticDomain) {
  for (const Op op : {Op::layernorm_fwd, Op::rmsnorm_fwd, Op::layernorm_bwd}) {
    const Kernel* found = nullptr;
    for (const Kernel& k : kernel_table())
      if (k.op == op && k.dtype == DType::f32 && k.origin == Origin::ours && k.family == Family::scalar) {
        found = &k;
        break;
      }
    ASSERT_NE(found, nullptr) << to_string(op);
    Kernel realistic = *found;
    realistic.range = parse_domain("realistic");
    int outside_without = 0;
    for (const bool fitted : {true, false}) {
      GenOptions opts = kernel_options(realistic);
      if (!fitted) opts.range = found->range;
      const auto gen = gen_problem(opts);
      for (int i = 0; i < 150; ++i) {
        const Problem p = gen(rc::Random(static_cast<uint64_t>(i)), i % 101).value();
        const std::string reason = declines(realistic, request_for(realistic, p));
        if (fitted)
          ASSERT_EQ(reason, "") << to_string(op) << " draw " << i << ": " << p.rows << " x " << p.cols;
        else
          outside_without += !reason.empty();
      }
    }
    EXPECT_GT(outside_without, 30) << to_string(op) << ": the default draws are often outside the preset";
  }
}

// Rows past max_d (GenOptions::long_d): at size 100 (one in long_one_in of
// those), or at every size with always_long, d lies in (max_d, long_d] and
// no further than the kernel's declared max_d; below size 100 without
// always_long d stays <= max_d; a
// kernel that declares max_d <= 65536 gets none; a norm followed by a Linear
// none. The same options without long_d never pass 65536 (so the first check
// can fail).
TEST(ProblemGenerator, LongRowsReachPast65536InsideTheDeclaredD) {
  const auto widths = [](GenOptions opts, int size) {
    std::set<int64_t> d;
    const auto gen = gen_problem(opts);
    for (int i = 0; i < 40; ++i) {
      const Problem p = gen(rc::Random(static_cast<uint64_t>(i)), size).value();
      if (p.cols > 65536) {
        EXPECT_LE(p.rows, 2) << "long rows come one or two at a time";
      }
      d.insert(p.cols);
    }
    return d;
  };
  GenOptions opts;
  opts.op = Op::layernorm_fwd;
  opts.nonfinite = false;
  EXPECT_LE(*widths(opts, 100).rbegin(), 65536) << "no long rows without long_d";
  opts.long_d = 1 << 18;
  std::set<int64_t> d = widths(opts, 100);
  EXPECT_GT(*d.begin(), 65536);
  EXPECT_LE(*d.rbegin(), 1 << 18);
  EXPECT_GT(d.size(), 10u) << "d varies";
  opts.long_one_in = 10;  // about 4 of the 40 draws (none or all with probability below 0.02)
  d = widths(opts, 100);
  EXPECT_LE(*d.begin(), 65536) << "long_one_in 10: some are not long";
  EXPECT_GT(*d.rbegin(), 65536) << "long_one_in 10: some are";
  opts.long_one_in = 1;
  opts.max_rows = 1;
  EXPECT_LE(*widths(opts, 99).rbegin(), 65536) << "only size 100 draws them";
  opts.always_long = true;
  EXPECT_GT(*widths(opts, 3).begin(), 65536) << "always_long at every size";
  opts.range.max_d = 70000;
  d = widths(opts, 100);
  EXPECT_GT(*d.begin(), 65536);
  EXPECT_LE(*d.rbegin(), 70000) << "inside the declared domain";
  opts.range.max_d = 4096;
  EXPECT_LE(*widths(opts, 100).rbegin(), 4096);
  opts.range = {};
  opts.op = Op::rmsnorm_linear_fwd;
  EXPECT_LE(*widths(opts, 100).rbegin(), 1024);
}

// Shows: a problem of 4 rows shrinks first to each row alone, then to each
// set of 3 (a finding that needs two rows still loses the others); a problem
// of 2 rows has the single rows only (dropping one is keeping the other).
TEST(ProblemShrink, TriesEachRowThenAllButOne) {
  Problem p;
  p.rows = 4;
  p.cols = 2;
  p.x = {0, 1, 10, 11, 20, 21, 30, 31};
  p.dy = p.x;
  auto seq = shrink_problem(p);
  std::vector<std::vector<float>> firsts;
  for (int i = 0; i < 8; ++i) {
    const auto q = seq.next();
    ASSERT_TRUE(static_cast<bool>(q));
    EXPECT_EQ(q->x, q->dy);
    EXPECT_EQ(q->x.size(), static_cast<size_t>(q->rows * q->cols));
    firsts.push_back(q->x);
  }
  EXPECT_EQ(firsts[0], (std::vector<float>{0, 1}));
  EXPECT_EQ(firsts[3], (std::vector<float>{30, 31}));
  EXPECT_EQ(firsts[4], (std::vector<float>{10, 11, 20, 21, 30, 31}));
  EXPECT_EQ(firsts[6], (std::vector<float>{0, 1, 10, 11, 30, 31}));

  p.rows = 2;
  p.x.resize(4);
  p.dy = p.x;
  auto two = shrink_problem(p);
  EXPECT_EQ(two.next()->rows, 1);
  EXPECT_EQ(two.next()->rows, 1);
  EXPECT_EQ(two.next()->rows, 2) << "after the single rows come the column shrinks";
}

// The hard regions are reached in a default-size run (RapidCheck's sizes 0..99).
TEST(ProblemGenerator, ReachesTheHardRegions) {
  const auto gen = gen_problem(GenOptions{});
  std::set<std::string> tags;
  bool one_ulp_row = false;
  for (int i = 0; i < 3000; ++i) {
    const Problem p = gen(rc::Random(static_cast<uint64_t>(i) + 7), i % 100).value();
    for (auto& t : tags_of(p)) tags.insert(t);
    one_ulp_row |= p.cols >= 2 && p.x[0] != p.x[1] && std::nextafter(p.x[0], p.x[1]) == p.x[1];
  }
  for (const char* tag : {"d<=3", "d<=64", "d<=1024", "d>1024", "x:nonfinite", "x^2 overflows",
                          "x subnormal", "|mu|/sigma<1", "|mu|/sigma<1e5", "|mu|/sigma>=1e5",
                          "constant row", "constant row, eps=0"})
    EXPECT_TRUE(tags.count(tag)) << tag << " never generated";
  EXPECT_TRUE(one_ulp_row);
}

}  // namespace
}  // namespace normcheck::props
