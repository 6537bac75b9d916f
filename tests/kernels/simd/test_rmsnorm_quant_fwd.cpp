// The quantized RMSNorm forward rows (kernels/simd/rmsnorm_quant_fwd_hwy.cpp)
// on every Highway target, against a scalar evaluation of the arithmetic
// their comment declares: codes, per-token scales and rrms bit for bit.
//   r   = 1/sqrt(ss/d + eps) in float64, ss = sum x_i^2
//   y_i = fl32(fl32(x_i fl32(r)) gamma_i) where r is a normal float, else
//         fl32((x_i r) gamma_i) in float64
//   s   = the static scale, or max(fl32(min(max|y|, scale_ub) / qmax), scale_min)
//   q_i = quant_code(quant_cast(fl32(y_i fl32(1 / s))))   (float_format.h)
// The kernel sums the squares in its own order: every row here is built so
// that the float64 sum is exact in any order (bf16 x with |x| in [2^-3, 2^8)
// are multiples of 2^-10, their squares multiples of 2^-20 below 2^16, and a
// row of fewer than 2^17 of them sums below 2^33: 53 bits; or rows of one
// magnitude, whose squares are one power of two), so the scalar r is the
// kernel's. Rows: random; rows whose t lands on every rounding tie of the
// format and beyond the saturation limit (x = +-2^k, eps = 0, so r = 2^-k,
// x r = +-1 and y = +-gamma exactly); all-zero rows; rows whose r is not a
// normal float (the float64 pass); d = 1, odd d, two chunks, rows at a
// stride whose padding is NaN (a read past a row's end reaches the codes)
// and whose code padding must stay as it was. Then evaluate() on generated
// problems: each row within the policy of its spec.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "generators.h"  // props::draw_quantized, kernel_options
#include "normcheck/evaluate.h"
#include "normcheck/float_format.h"
#include "normcheck/invoke.h"
#include "normcheck/op_spec.h"
#include "simd/rmsnorm_quant.h"
#include "simd_test_support.h"
#include "test_seed.h"

namespace normcheck {
namespace {

const std::pair<std::string_view, std::string_view> kRows[] = {
    {"rmsnorm_fwd.hwy_e4m3", "rmsnorm fwd dtype=bf16 y=f32 quant=e4m3 scale=static"},
    {"rmsnorm_fwd.hwy_e4m3_token", "rmsnorm fwd dtype=bf16 y=f32 quant=e4m3 scale=token scale_min=4.359654e-06"},
    {"rmsnorm_fwd.hwy_int8_token", "rmsnorm fwd dtype=bf16 y=f32 quant=int8 scale=token scale_min=1.1920929e-07 nan=clamp"},
};

// The quantized Highway rows of the table.
std::vector<const Kernel*> quant_kernels() {
  return test::simd_spec_kernels([](const OpSpec& spec) { return spec.quant.has_value(); });
}

TEST(RmsNormQuantRows, EachRowStatesItsSpec) {
  for (const auto& [name, text] : kRows) {
    test::expect_row_states_spec(name, text);
    const Kernel* k = find_kernel(name);
    ASSERT_TRUE(k && k->spec) << name;
    EXPECT_EQ(to_text(*k->spec), text) << name;
    EXPECT_TRUE(k->spec->has(TensorName::stat)) << name;
  }
  // the minimum scales are vLLM's, as floats
  EXPECT_EQ(simd::kE4m3MinScale, 1.0f / (448.0f * 512.0f));
  EXPECT_EQ(simd::kInt8MinScale, 0x1p-23f);
  EXPECT_EQ(quant_kernels().size(), std::size(kRows)) << "a quantized Highway row this test does not name";
}

// One call: rows of x (bf16 bits) at a stride, gamma (empty: none), eps and
// the static scale (rows with scale=static).
struct Case {
  std::string what;
  int64_t rows = 0, cols = 0, stride = 0;
  float eps = 0;
  std::vector<uint16_t> x;
  std::vector<float> gamma;
  float scale = 1;
};

struct Outputs {
  std::vector<uint8_t> codes;  // rows x stride, the padding included
  std::vector<float> scale, rrms;
};

constexpr uint8_t kPadding = 0xA5;

float bf16_value(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

Outputs run(const Kernel& k, const Case& c) {
  Outputs o;
  o.codes.assign(static_cast<size_t>(c.rows * c.stride), kPadding);
  o.scale.assign(static_cast<size_t>(c.rows), -1.0f);
  o.rrms.assign(static_cast<size_t>(c.rows), -1.0f);
  KernelArgs a;
  a.rows = c.rows, a.cols = c.cols, a.eps = c.eps, a.row_stride = c.stride;
  a.x = c.x.data();
  a.gamma = c.gamma.empty() ? nullptr : c.gamma.data();
  a.out = o.codes.data();
  a.stat = o.rrms.data();
  float given = c.scale;
  a.scale = k.spec->quant->dynamic() ? static_cast<void*>(o.scale.data()) : static_cast<void*>(&given);
  invoke(k, a);
  return o;
}

// The declared arithmetic, one element at a time (the file's comment).
Outputs reference(const OpSpec& spec, const Case& c) {
  const Quantization& q = *spec.quant;
  Outputs o;
  o.codes.assign(static_cast<size_t>(c.rows * c.stride), kPadding);
  o.scale.assign(static_cast<size_t>(c.rows), -1.0f);
  o.rrms.assign(static_cast<size_t>(c.rows), -1.0f);
  for (int64_t r = 0; r < c.rows; ++r) {
    const uint16_t* x = c.x.data() + r * c.stride;
    double ss = 0;
    for (int64_t j = 0; j < c.cols; ++j) ss += static_cast<double>(bf16_value(x[j])) * bf16_value(x[j]);
    const double r64 = 1.0 / std::sqrt(ss / static_cast<double>(c.cols) + c.eps);
    const float r32 = static_cast<float>(r64);
    const bool float_math = r64 >= 0x1p-126 && r64 < 0x1p127;
    std::vector<float> y(static_cast<size_t>(c.cols));
    for (int64_t j = 0; j < c.cols; ++j) {
      const float g = c.gamma.empty() ? 1.0f : c.gamma[j];
      if (float_math) {
        const float p = bf16_value(x[j]) * r32;
        y[j] = c.gamma.empty() ? p : p * g;
      } else {
        double v = static_cast<double>(bf16_value(x[j])) * r64;
        if (!c.gamma.empty()) v *= static_cast<double>(g);
        y[j] = static_cast<float>(v);
      }
    }
    float s = c.scale;
    if (q.dynamic()) {
      float a = 0;
      for (const float v : y) a = std::isnan(v) || std::isnan(a) ? NAN : std::max(a, std::fabs(v));
      s = std::isnan(a) ? a : std::max(std::min(a, q.scale_ub) / static_cast<float>(quant_max(q.cast.format)),
                                       q.scale_min);
      o.scale[r] = s;
    }
    const float inv = 1.0f / s;
    for (int64_t j = 0; j < c.cols; ++j) {
      const float t = y[j] * inv;
      o.codes[r * c.stride + j] = quant_code(q.cast.format, quant_cast(q.cast, t));
    }
    o.rrms[r] = r32;
  }
  return o;
}

// A bf16 value with |x| in [2^-3, 2^8) (or 0 one time in 16), random sign.
uint16_t exact_sum_bf16(std::mt19937_64& rng) {
  const uint64_t b = rng();
  if (b % 16 == 0) return 0;
  const int e = static_cast<int>((b >> 8) % 11) - 3;
  return static_cast<uint16_t>(((b >> 4) & 1) << 15 | (e + 127) << 7 | ((b >> 20) & 0x7F));
}

// Rows x at a stride (padding bf16 NaN), filled by value(row, col).
template <class Value>
Case rows_of(std::string what, int64_t rows, int64_t cols, int64_t pad, float eps, const Value& value) {
  Case c;
  c.what = std::move(what);
  c.rows = rows, c.cols = cols, c.stride = cols + pad, c.eps = eps;
  c.x.assign(static_cast<size_t>(rows * c.stride), 0x7FC0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) c.x[r * c.stride + j] = value(r, j);
  return c;
}

// +-2^k as bf16, the sign random.
uint16_t signed_power(int k, std::mt19937_64& rng) {
  return static_cast<uint16_t>((rng() & 1) << 15 | (k + 127) << 7);
}

// gamma for rows of y = +-gamma: every tie between two neighbouring codes of
// the format, every code's value, the format's largest value (so a per-token
// scale is exactly 1) and, with `beyond`, values past the largest (saturation
// of a static scale 1).
std::vector<float> tie_gamma(QuantFormat f, bool beyond) {
  std::vector<float> g;
  if (f == QuantFormat::int8) {
    for (int k = -127; k <= 126; ++k) g.push_back(static_cast<float>(k) + 0.5f), g.push_back(static_cast<float>(k));
    g.push_back(127);
    if (beyond) g.insert(g.end(), {127.5f, 128.5f, -128.5f, -129.5f, 1000.0f, -1e30f});
  } else {
    for (int c = 0; c < 0x7E; ++c) {
      const double v = quant_value(f, static_cast<uint8_t>(c)), next = quant_value(f, static_cast<uint8_t>(c + 1));
      g.push_back(static_cast<float>(v)), g.push_back(static_cast<float>((v + next) / 2));
    }
    g.push_back(448);
    if (beyond) g.insert(g.end(), {464.0f, 480.0f, 512.0f, 1e30f});
  }
  return g;
}

std::vector<Case> cases_for(const Kernel& k, std::mt19937_64& rng) {
  const Quantization& q = *k.spec->quant;
  std::normal_distribution<double> normal;
  std::vector<Case> cases;
  // random rows; static scales that keep t small, near 1, and past 448 (saturating)
  const float scales[] = {1.0f, 0.01f, 0x1p-9f, 3.7f};
  const int64_t lengths[] = {1, 2, 3, 17, 64, 77, 300, 1031, 2 * 1024 + 37};
  int variant = 0;
  for (const int64_t cols : lengths) {
    for (const int64_t pad : {0, 1, 7}) {
      ++variant;
      Case c = rows_of("random", cols > 1000 ? 2 : 3, cols, pad, variant % 2 ? 1e-6f : 0.0f,
                       [&](int64_t, int64_t) { return exact_sum_bf16(rng); });
      if (variant % 3 != 0)
        for (int64_t j = 0; j < cols; ++j) c.gamma.push_back(static_cast<float>(1 + normal(rng) / 2));
      c.scale = scales[variant % 4];
      cases.push_back(std::move(c));
    }
  }
  // ties: y = +-gamma exactly (a static scale 1; a per-token scale 1, the largest |y| being the format's)
  for (const int k2 : {-3, 0, 5}) {
    const std::vector<float> g = tie_gamma(q.cast.format, !q.dynamic());
    const auto cols = static_cast<int64_t>(g.size());
    Case c = rows_of("ties 2^" + std::to_string(k2), 2, cols, k2 == 0 ? 3 : 0, 0.0f,
                     [&](int64_t, int64_t) { return signed_power(k2, rng); });
    c.gamma = g;
    cases.push_back(std::move(c));
  }
  // all-zero rows: r = 1/sqrt(eps); y = 0
  for (const int64_t cols : {1, 5, 100}) {
    Case c = rows_of("zero", 2, cols, 1, 1e-6f, [](int64_t, int64_t) { return uint16_t{0}; });
    cases.push_back(std::move(c));
  }
  // r not a normal float (the float64 pass): tiny x (r = 2^130) and huge x (r = 2^-127), eps = 0
  for (const int k2 : {-130, 127}) {
    Case c = rows_of("r 2^" + std::to_string(-k2), 2, 37, 2, 0.0f,
                     [&](int64_t, int64_t) { return signed_power(k2, rng); });
    for (int64_t j = 0; j < 37; ++j) c.gamma.push_back(static_cast<float>(1 + normal(rng) / 2));
    cases.push_back(std::move(c));
  }
  // long rows, split over the pool's threads when it has several (row_driver.h)
  {
    Case c = rows_of("long", 2, 40000, 5, 1e-6f, [&](int64_t, int64_t) { return exact_sum_bf16(rng); });
    for (int64_t j = 0; j < 40000; ++j) c.gamma.push_back(static_cast<float>(1 + normal(rng) / 2));
    c.scale = 0.01f;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string first_difference(const Case& c, const Outputs& got, const Outputs& want) {
  std::ostringstream os;
  for (size_t i = 0; i < want.codes.size(); ++i)
    if (got.codes[i] != want.codes[i]) {
      const int64_t r = static_cast<int64_t>(i) / c.stride, j = static_cast<int64_t>(i) % c.stride;
      os << std::hex << "code [" << std::dec << r << "][" << j << "] 0x" << std::hex << int{got.codes[i]}
         << ", want 0x" << int{want.codes[i]} << (j >= c.cols ? " (padding)" : "") << "; ";
      break;
    }
  for (size_t r = 0; r < want.rrms.size(); ++r) {
    if (std::bit_cast<uint32_t>(got.rrms[r]) != std::bit_cast<uint32_t>(want.rrms[r]))
      os << "rrms[" << r << "] " << got.rrms[r] << ", want " << want.rrms[r] << "; ";
    if (std::bit_cast<uint32_t>(got.scale[r]) != std::bit_cast<uint32_t>(want.scale[r]))
      os << "scale[" << r << "] " << got.scale[r] << ", want " << want.scale[r] << "; ";
  }
  return os.str();
}

class RmsNormQuant : public test::PerTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(RmsNormQuant);

TEST_P(RmsNormQuant, CodesScalesAndRrmsAreTheDeclaredArithmeticOnEveryTarget) {
  std::mt19937_64 rng(test::test_seed());
  for (const Kernel* k : quant_kernels()) {
    for (const Case& c : cases_for(*k, rng)) {
      const Outputs got = run(*k, c), want = reference(*k->spec, c);
      EXPECT_EQ(first_difference(c, got, want), "")
          << target() << " " << k->name << " " << c.what << " " << c.rows << "x" << c.cols << " stride " << c.stride
          << " eps " << c.eps << " scale " << c.scale;
    }
  }
}

// evaluate() holds each row, on every target, to the codes its spec's policy
// admits (verify/spec_policy.cpp: y's range under the row's bound, then the
// declared multiply and cast) and a per-token scale to its range, on the
// problems of the SIMD tests (random_problem: x = center + N(0,1), gamma
// 1 + N(0,1)/2; lengths around every vector width, two chunks; strides) with
// the property generators' quantization (draw_quantized: a static scale
// around the tensor's largest |y| / qmax or at the saturation edge, rows aimed
// at the midpoints between codes, a scale_min that binds, a tied maximum).
TEST_P(RmsNormQuant, EvaluatePassesOnGeneratedProblemsOnEveryTarget) {
  std::mt19937_64 rng(test::test_seed());
  const int64_t lengths[] = {1, 3, 17, 64, 77, 300, 1031, 2 * 1024 + 37};
  int variant = 0;
  for (const Kernel* k : quant_kernels()) {
    const props::GenOptions options = props::kernel_options(*k);
    for (const int64_t cols : lengths) {
      for (const int64_t pad : {0, 3}) {
        for (int draw = 0; draw < 5; ++draw) {
          ++variant;
          const double center = variant % 3 == 0 ? 3.0 : 0.0;
          Problem p = test::random_problem(*k, cols > 1000 ? 2 : 3, cols, center, /*affine=*/variant % 4 != 0,
                                           variant % 4, rng);
          p.row_stride = pad ? cols + pad : 0;
          p.eps = 1e-6f;
          props::draw_quantized(options, rng, p);
          const Evaluation e = evaluate(*k, p);
          EXPECT_TRUE(e.pass) << target() << " " << k->name << " " << p.rows << "x" << cols << " stride "
                              << p.row_stride << " scale " << p.scale << ": " << test::describe(e);
        }
      }
    }
  }
}

// The cases reach what they are for: saturation (a static t past 448 gives
// 448's code), ties to even (e4m3's 2^-10, between 0 and 2^-9, gives 0; int8's
// 0.5 gives 0, where half away from zero gives 1), a per-token scale of
// exactly 1 on tie rows, and the minimum scale on all-zero rows.
TEST(RmsNormQuantCases, TheCasesReachSaturationTiesAndTheMinimumScale) {
  std::mt19937_64 rng(test::test_seed());
  const Kernel* e4m3 = find_kernel("rmsnorm_fwd.hwy_e4m3");
  const Kernel* int8 = find_kernel("rmsnorm_fwd.hwy_int8_token");
  ASSERT_TRUE(e4m3 && int8);
  int saturated = 0, e4m3_ties = 0, int8_ties = 0, zero_rows = 0;
  for (const Case& c : cases_for(*e4m3, rng)) {
    if (c.what.rfind("ties", 0) != 0) continue;
    const Outputs o = reference(*e4m3->spec, c);
    for (int64_t j = 0; j < c.cols; ++j) {
      if (c.gamma[j] > 448) saturated += (o.codes[j] & 0x7F) == 0x7E;
      if (c.gamma[j] == 0x1p-10f) e4m3_ties += (o.codes[j] & 0x7F) == 0;
    }
  }
  for (const Case& c : cases_for(*int8, rng)) {
    const Outputs o = reference(*int8->spec, c);
    if (c.what.rfind("ties", 0) == 0) {
      EXPECT_EQ(o.scale[0], 1.0f) << c.what;
      for (int64_t j = 0; j < c.cols; ++j)
        if (c.gamma[j] == 0.5f) int8_ties += o.codes[j] == 0;
    }
    if (c.what == "zero") zero_rows += o.scale[0] == simd::kInt8MinScale;
  }
  EXPECT_GT(saturated, 0);
  EXPECT_GT(e4m3_ties, 0);
  EXPECT_GT(int8_ties, 0);
  EXPECT_GT(zero_rows, 0);
}

}  // namespace
}  // namespace normcheck
